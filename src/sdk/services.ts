import type { DescService } from "@bufbuild/protobuf";
import { SecurityAdvisory } from "../gen/platform/advisory/v1/security_advisory_pb.js";
import { SecurityAdvisoryService } from "../gen/platform/advisory/v2/security_advisory_pb.js";
import { Auth } from "../gen/platform/auth/v1/auth_pb.js";
import { Subscriptions } from "../gen/platform/events/v1/subscriptions_pb.js";
import { SubscriptionsService } from "../gen/platform/events/v2/subscriptions_pb.js";
import { GroupAccountAssociations } from "../gen/platform/iam/v1/account_associations_pb.js";
import { ExternalGroupRoleMappings } from "../gen/platform/iam/v1/external_group_role_mappings_pb.js";
import { GroupInvites } from "../gen/platform/iam/v1/group_invites_pb.js";
import { Groups } from "../gen/platform/iam/v1/groups_pb.js";
import { Identities } from "../gen/platform/iam/v1/identities_pb.js";
import { IdentityProviders } from "../gen/platform/iam/v1/identity_providers_pb.js";
import { RoleBindings } from "../gen/platform/iam/v1/role_bindings_pb.js";
import { Roles } from "../gen/platform/iam/v1/roles_pb.js";
import { Terms } from "../gen/platform/iam/v1/terms_pb.js";
import { AccountAssociationsService } from "../gen/platform/iam/v2/account_associations_pb.js";
import { ExternalGroupRoleMappingsService } from "../gen/platform/iam/v2/external_group_role_mappings_pb.js";
import { GroupInvitesService } from "../gen/platform/iam/v2/group_invites_pb.js";
import { GroupsService } from "../gen/platform/iam/v2/groups_pb.js";
import { IdentitiesService } from "../gen/platform/iam/v2/identities_pb.js";
import { IdentityProvidersService } from "../gen/platform/iam/v2/identity_providers_pb.js";
import { RoleBindingsService } from "../gen/platform/iam/v2/role_bindings_pb.js";
import { RolesService } from "../gen/platform/iam/v2/roles_pb.js";
import { TermsService } from "../gen/platform/iam/v2/terms_pb.js";
import { Artifacts } from "../gen/platform/libraries/v1/artifacts_pb.js";
import { ArtifactsService } from "../gen/platform/libraries/v2/artifacts_pb.js";
import { PingService as PingServiceV1 } from "../gen/platform/ping/v1/ping_pb.js";
import { PingService } from "../gen/platform/ping/v2/ping_pb.js";
import { Registry } from "../gen/platform/registry/v1/registry_pb.js";
import { Vulnerabilities } from "../gen/platform/registry/v1/vulnerabilities_pb.js";
import { ImagesService } from "../gen/platform/registry/v2/images_pb.js";
import { ReposService } from "../gen/platform/registry/v2/repos_pb.js";
import { TagsService } from "../gen/platform/registry/v2/tags_pb.js";
import { Advisories } from "../gen/platform/vulnerabilities/v1/advisories_pb.js";
import { AdvisoriesService } from "../gen/platform/vulnerabilities/v2/advisories_pb.js";

/** A table of services: a service at the top, or a domain naming its services. */
export type ServiceTable = Readonly<Record<string, DescService | Readonly<Record<string, DescService>>>>;

/**
 * Every service of the platform API, grouped by domain: `client.iam.groups`,
 * `client.registry.repos`… A new service is one line here (its client, types and paging helpers
 * follow from the descriptor).
 */
export const WHARF_SERVICES = {
  ping: PingService,
  iam: {
    groups: GroupsService,
    identities: IdentitiesService,
    roles: RolesService,
    roleBindings: RoleBindingsService,
    identityProviders: IdentityProvidersService,
    accountAssociations: AccountAssociationsService,
    groupInvites: GroupInvitesService,
    externalGroupRoleMappings: ExternalGroupRoleMappingsService,
    terms: TermsService,
  },
  iamV1: {
    groups: Groups,
    identities: Identities,
    roles: Roles,
    roleBindings: RoleBindings,
    terms: Terms,
    identityProviders: IdentityProviders,
    groupAccountAssociations: GroupAccountAssociations,
    groupInvites: GroupInvites,
    externalGroupRoleMappings: ExternalGroupRoleMappings,
  },
  registry: {
    repos: ReposService,
    tags: TagsService,
    images: ImagesService,
  },
  registryV1: {
    registry: Registry,
    vulnerabilities: Vulnerabilities,
  },
  vulnerabilities: {
    advisories: AdvisoriesService,
  },
  advisory: {
    securityAdvisory: SecurityAdvisoryService,
  },
  libraries: {
    artifacts: ArtifactsService,
  },
  events: {
    subscriptions: SubscriptionsService,
  },
  pingV1: PingServiceV1,
  authV1: {
    auth: Auth,
  },
  eventsV1: {
    subscriptions: Subscriptions,
  },
  librariesV1: {
    artifacts: Artifacts,
  },
  advisoryV1: {
    securityAdvisory: SecurityAdvisory,
  },
  vulnerabilitiesV1: {
    advisories: Advisories,
  },
} as const satisfies ServiceTable;
