import { SecurityAdvisory } from "../gen/platform/advisory/v1/security_advisory_pb.js";
import { Auth } from "../gen/platform/auth/v1/auth_pb.js";
import { Subscriptions } from "../gen/platform/events/v1/subscriptions_pb.js";
import { GroupAccountAssociations } from "../gen/platform/iam/v1/account_associations_pb.js";
import { ExternalGroupRoleMappings } from "../gen/platform/iam/v1/external_group_role_mappings_pb.js";
import { GroupInvites } from "../gen/platform/iam/v1/group_invites_pb.js";
import { Groups } from "../gen/platform/iam/v1/groups_pb.js";
import { Identities } from "../gen/platform/iam/v1/identities_pb.js";
import { IdentityProviders } from "../gen/platform/iam/v1/identity_providers_pb.js";
import { RoleBindings } from "../gen/platform/iam/v1/role_bindings_pb.js";
import { Roles } from "../gen/platform/iam/v1/roles_pb.js";
import { Terms } from "../gen/platform/iam/v1/terms_pb.js";
import { Artifacts } from "../gen/platform/libraries/v1/artifacts_pb.js";
import { PingService as PingServiceV1 } from "../gen/platform/ping/v1/ping_pb.js";
import { PingService } from "../gen/platform/ping/v2/ping_pb.js";
import { Registry } from "../gen/platform/registry/v1/registry_pb.js";
import { Vex } from "../gen/platform/registry/v1/vex_pb.js";
import { Vulnerabilities } from "../gen/platform/registry/v1/vulnerabilities_pb.js";
import { Advisories } from "../gen/platform/vulnerabilities/v1/advisories_pb.js";
import type { ServiceTable } from "./service-clients.js";
import { ADVISORY_SERVICES } from "./services/advisory.js";
import { AUDIT_SERVICES } from "./services/audit.js";
import { EVENTS_SERVICES } from "./services/events.js";
import { IAM_SERVICES } from "./services/iam.js";
import { LIBRARIES_SERVICES } from "./services/libraries.js";
import { REGISTRY_SERVICES } from "./services/registry.js";
import { VULNERABILITIES_SERVICES } from "./services/vulnerabilities.js";

export type { ServiceTable } from "./service-clients.js";
export {
  ADVISORY_SERVICES,
  AUDIT_SERVICES,
  EVENTS_SERVICES,
  IAM_SERVICES,
  LIBRARIES_SERVICES,
  REGISTRY_SERVICES,
  VULNERABILITIES_SERVICES,
};

/**
 * Every service of the platform API, grouped by domain: `client.iam.groups`,
 * `client.registry.repos`… A new service is one line here or in its domain's table (its client,
 * types and paging helpers follow from the descriptor). Each domain of the current API has its own
 * module (`services/iam.ts`: IAM_SERVICES…), so a program that calls one domain (the CLI's lean
 * client) loads only that domain's descriptors.
 */
export const WHARF_SERVICES = {
  ping: PingService,
  iam: IAM_SERVICES,
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
  registry: REGISTRY_SERVICES,
  registryV1: {
    registry: Registry,
    vulnerabilities: Vulnerabilities,
    vex: Vex,
  },
  vulnerabilities: VULNERABILITIES_SERVICES,
  advisory: ADVISORY_SERVICES,
  libraries: LIBRARIES_SERVICES,
  events: EVENTS_SERVICES,
  audit: AUDIT_SERVICES,
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
