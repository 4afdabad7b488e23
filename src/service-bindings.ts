import { type AdvisoriesServiceDeps, createAdvisoriesService } from "./advisories/advisories-service.js";
import {
  createSecurityAdvisoryService,
  type SecurityAdvisoryServiceDeps,
} from "./advisories/security-advisory-service.js";
import { bindService, type ServiceBinding } from "./core/service.js";
import { createSubscriptionsService, type SubscriptionsServiceDeps } from "./events/subscriptions-service.js";
import { SecurityAdvisoryService } from "./gen/platform/advisory/v2/security_advisory_pb.js";
import { SubscriptionsService } from "./gen/platform/events/v2/subscriptions_pb.js";
import { Groups } from "./gen/platform/iam/v1/groups_pb.js";
import { Identities } from "./gen/platform/iam/v1/identities_pb.js";
import { RoleBindings } from "./gen/platform/iam/v1/role_bindings_pb.js";
import { Roles } from "./gen/platform/iam/v1/roles_pb.js";
import { Terms } from "./gen/platform/iam/v1/terms_pb.js";
import { AccountAssociationsService } from "./gen/platform/iam/v2/account_associations_pb.js";
import { ExternalGroupRoleMappingsService } from "./gen/platform/iam/v2/external_group_role_mappings_pb.js";
import { GroupInvitesService } from "./gen/platform/iam/v2/group_invites_pb.js";
import { GroupsService } from "./gen/platform/iam/v2/groups_pb.js";
import { IdentitiesService } from "./gen/platform/iam/v2/identities_pb.js";
import { IdentityProvidersService } from "./gen/platform/iam/v2/identity_providers_pb.js";
import { RoleBindingsService } from "./gen/platform/iam/v2/role_bindings_pb.js";
import { RolesService } from "./gen/platform/iam/v2/roles_pb.js";
import { TermsService } from "./gen/platform/iam/v2/terms_pb.js";
import { ArtifactsService } from "./gen/platform/libraries/v2/artifacts_pb.js";
import { PingService } from "./gen/platform/ping/v2/ping_pb.js";
import { Registry } from "./gen/platform/registry/v1/registry_pb.js";
import { Vulnerabilities } from "./gen/platform/registry/v1/vulnerabilities_pb.js";
import { ImagesService } from "./gen/platform/registry/v2/images_pb.js";
import { ReposService } from "./gen/platform/registry/v2/repos_pb.js";
import { TagsService } from "./gen/platform/registry/v2/tags_pb.js";
import { AdvisoriesService } from "./gen/platform/vulnerabilities/v2/advisories_pb.js";
import { createAccountAssociationsService } from "./iam/account-associations-service.js";
import { createExternalGroupRoleMappingsService } from "./iam/external-group-role-mappings-service.js";
import { createGroupInvitesService } from "./iam/group-invites-service.js";
import { createGroupsService } from "./iam/groups-service.js";
import { createIdentitiesService } from "./iam/identities-service.js";
import { createIdentityProvidersService } from "./iam/identity-providers-service.js";
import { createRoleBindingsService } from "./iam/role-bindings-service.js";
import { createRolesService } from "./iam/roles-service.js";
import type { IamServiceDeps } from "./iam/service-deps.js";
import { createTermsService } from "./iam/terms-service.js";
import { createGroupsV1Service } from "./iam/v1/groups-v1-service.js";
import { createIdentitiesV1Service } from "./iam/v1/identities-v1-service.js";
import { createRoleBindingsV1Service } from "./iam/v1/role-bindings-v1-service.js";
import { createRolesV1Service } from "./iam/v1/roles-v1-service.js";
import { createTermsV1Service } from "./iam/v1/terms-v1-service.js";
import { type ArtifactsServiceDeps, createArtifactsService } from "./libraries/artifacts-service.js";
import { createPingService } from "./ping/ping-service.js";
import { createImagesService } from "./registry/images-service.js";
import { createReposService } from "./registry/repos-service.js";
import type { RegistryServiceDeps } from "./registry/service-deps.js";
import { createTagsService } from "./registry/tags-service.js";
import { createRegistryV1VulnReportHandlers } from "./vulnreports/registry-v1-service.js";
import { createResolvedVulnsSource } from "./vulnreports/resolved-vulns-source.js";
import type { VulnReportServiceDeps } from "./vulnreports/service-deps.js";
import { createVulnerabilitiesService } from "./vulnreports/vulnerabilities-service.js";

/** What the composition root gives the services: what each domain's services need, together. */
export interface ServiceDeps
  extends IamServiceDeps,
    RegistryServiceDeps,
    SubscriptionsServiceDeps,
    ArtifactsServiceDeps,
    AdvisoriesServiceDeps,
    Omit<SecurityAdvisoryServiceDeps, "resolvedVulns">,
    VulnReportServiceDeps {}

/** Every service of the platform API, bound to its implementation; served by every transport. */
export function createServiceBindings(deps: ServiceDeps): ServiceBinding[] {
  const groups = createGroupsService(deps);
  const identities = createIdentitiesService(deps);
  const roles = createRolesService(deps);
  const roleBindings = createRoleBindingsService(deps);
  const terms = createTermsService(deps);
  return [
    bindService(PingService, createPingService()),
    bindService(GroupsService, groups),
    bindService(IdentitiesService, identities),
    bindService(RolesService, roles),
    bindService(RoleBindingsService, roleBindings),
    bindService(IdentityProvidersService, createIdentityProvidersService(deps)),
    bindService(AccountAssociationsService, createAccountAssociationsService(deps)),
    bindService(GroupInvitesService, createGroupInvitesService(deps)),
    bindService(ExternalGroupRoleMappingsService, createExternalGroupRoleMappingsService(deps)),
    bindService(TermsService, terms),
    bindService(ReposService, createReposService(deps)),
    bindService(TagsService, createTagsService(deps)),
    bindService(ImagesService, createImagesService(deps)),
    bindService(SubscriptionsService, createSubscriptionsService(deps)),
    bindService(ArtifactsService, createArtifactsService(deps)),
    bindService(AdvisoriesService, createAdvisoriesService(deps)),
    bindService(
      SecurityAdvisoryService,
      createSecurityAdvisoryService({ ...deps, resolvedVulns: createResolvedVulnsSource(deps.store) }),
    ),
    bindService(Registry, { ...createRegistryV1VulnReportHandlers(deps) }),
    bindService(Vulnerabilities, createVulnerabilitiesService(deps)),
    bindService(Groups, createGroupsV1Service(groups, deps.store)),
    bindService(Identities, createIdentitiesV1Service(identities)),
    bindService(Roles, createRolesV1Service(roles)),
    bindService(RoleBindings, createRoleBindingsV1Service(roleBindings, roles)),
    bindService(Terms, createTermsV1Service(terms)),
  ];
}
