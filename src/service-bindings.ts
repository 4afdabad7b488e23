import { type AdvisoriesServiceDeps, createAdvisoriesService } from "./advisories/advisories-service.js";
import {
  createSecurityAdvisoryService,
  type SecurityAdvisoryServiceDeps,
} from "./advisories/security-advisory-service.js";
import { createAdvisoriesV1Service } from "./advisories/v1/advisories-v1-service.js";
import { createSecurityAdvisoryV1Service } from "./advisories/v1/security-advisory-v1-service.js";
import { type AuditLogServiceDeps, createAuditLogService } from "./audit/audit-log-service.js";
import { bindService, type ServiceBinding } from "./core/service.js";
import { createSubscriptionsService, type SubscriptionsServiceDeps } from "./events/subscriptions-service.js";
import { createSubscriptionsV1Service } from "./events/v1/subscriptions-v1-service.js";
import { SecurityAdvisory } from "./gen/platform/advisory/v1/security_advisory_pb.js";
import { SecurityAdvisoryService } from "./gen/platform/advisory/v2/security_advisory_pb.js";
import { AuditLogService } from "./gen/platform/audit/v2/audit_pb.js";
import { Auth } from "./gen/platform/auth/v1/auth_pb.js";
import { Subscriptions } from "./gen/platform/events/v1/subscriptions_pb.js";
import { SubscriptionsService } from "./gen/platform/events/v2/subscriptions_pb.js";
import { GroupAccountAssociations } from "./gen/platform/iam/v1/account_associations_pb.js";
import { ExternalGroupRoleMappings } from "./gen/platform/iam/v1/external_group_role_mappings_pb.js";
import { GroupInvites } from "./gen/platform/iam/v1/group_invites_pb.js";
import { Groups } from "./gen/platform/iam/v1/groups_pb.js";
import { Identities } from "./gen/platform/iam/v1/identities_pb.js";
import { IdentityProviders } from "./gen/platform/iam/v1/identity_providers_pb.js";
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
import { Artifacts } from "./gen/platform/libraries/v1/artifacts_pb.js";
import { ArtifactsService } from "./gen/platform/libraries/v2/artifacts_pb.js";
import { PingService as PingServiceV1 } from "./gen/platform/ping/v1/ping_pb.js";
import { PingService } from "./gen/platform/ping/v2/ping_pb.js";
import { Registry } from "./gen/platform/registry/v1/registry_pb.js";
import { Vex } from "./gen/platform/registry/v1/vex_pb.js";
import { Vulnerabilities } from "./gen/platform/registry/v1/vulnerabilities_pb.js";
import { ImagesService } from "./gen/platform/registry/v2/images_pb.js";
import { ImmutabilityRulesService } from "./gen/platform/registry/v2/immutability_pb.js";
import { InsightsService } from "./gen/platform/registry/v2/insights_pb.js";
import { PoliciesService } from "./gen/platform/registry/v2/policies_pb.js";
import { QuotasService } from "./gen/platform/registry/v2/quotas_pb.js";
import {
  ReplicationRulesService,
  ReplicationRunsService,
} from "./gen/platform/registry/v2/replication_pb.js";
import { ReposService } from "./gen/platform/registry/v2/repos_pb.js";
import { RetentionPoliciesService } from "./gen/platform/registry/v2/retention_pb.js";
import { SbomService } from "./gen/platform/registry/v2/sbom_pb.js";
import { SearchService } from "./gen/platform/registry/v2/search_pb.js";
import { SignaturesService } from "./gen/platform/registry/v2/signatures_pb.js";
import { SigningKeysService } from "./gen/platform/registry/v2/signing_keys_pb.js";
import { TagsService } from "./gen/platform/registry/v2/tags_pb.js";
import { UpstreamsService } from "./gen/platform/registry/v2/upstreams_pb.js";
import { Advisories } from "./gen/platform/vulnerabilities/v1/advisories_pb.js";
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
import { createGroupAccountAssociationsV1Service } from "./iam/v1/account-associations-v1-service.js";
import { createAuthV1Service } from "./iam/v1/auth-v1-service.js";
import { createExternalGroupRoleMappingsV1Service } from "./iam/v1/external-group-role-mappings-v1-service.js";
import { createGroupInvitesV1Service } from "./iam/v1/group-invites-v1-service.js";
import { createGroupsV1Service } from "./iam/v1/groups-v1-service.js";
import { createIdentitiesV1Service } from "./iam/v1/identities-v1-service.js";
import { createIdentityProvidersV1Service } from "./iam/v1/identity-providers-v1-service.js";
import { createRoleBindingsV1Service } from "./iam/v1/role-bindings-v1-service.js";
import { createRolesV1Service } from "./iam/v1/roles-v1-service.js";
import { createTermsV1Service } from "./iam/v1/terms-v1-service.js";
import { type ArtifactsServiceDeps, createArtifactsService } from "./libraries/artifacts-service.js";
import { createArtifactsV1Service } from "./libraries/v1/artifacts-v1-service.js";
import { createPingService } from "./ping/ping-service.js";
import { createPingV1Service } from "./ping/v1/ping-v1-service.js";
import { createEolTagsHandlers, type EolTagsServiceDeps } from "./registry/eol/eol-tags-service.js";
import { createImagesService } from "./registry/images-service.js";
import { createImmutabilityRulesService } from "./registry/immutability/immutability-rules-service.js";
import { createQuotasService } from "./registry/quotas/quotas-service.js";
import { replicationDepsOf } from "./registry/replication/replication-deps.js";
import { createReplicationRunsService } from "./registry/replication/replication-runs-service.js";
import { createReplicationRulesService } from "./registry/replication/replication-service.js";
import { createReposService } from "./registry/repos-service.js";
import { retentionDepsOf } from "./registry/retention/retention-deps.js";
import { createRetentionPoliciesService } from "./registry/retention/retention-service.js";
import { createSearchService, type SearchServiceDeps } from "./registry/search/search-service.js";
import type { RegistryServiceDeps } from "./registry/service-deps.js";
import { createSigningKeysService } from "./registry/supply-chain/keys/signing-keys-service.js";
import {
  createPoliciesService,
  type PoliciesServiceDeps,
} from "./registry/supply-chain/policies/policies-service.js";
import { createSbomService, type SbomServiceDeps } from "./registry/supply-chain/sbom/sbom-service.js";
import { createSignaturesService } from "./registry/supply-chain/signatures/signatures-service.js";
import type { SignatureVerifier } from "./registry/supply-chain/supply-chain.js";
import { createTagsService } from "./registry/tags-service.js";
import { createUpstreamsService, type UpstreamsServiceDeps } from "./registry/upstreams/upstreams-service.js";
import { createRegistryV1Handlers } from "./registry/v1/registry-v1-service.js";
import type { Store } from "./storage/store.js";
import { createInsightsService } from "./vulnreports/insights-service.js";
import { createRegistryV1VulnReportHandlers } from "./vulnreports/registry-v1-service.js";
import { createResolvedVulnsSource } from "./vulnreports/resolved-vulns-source.js";
import type { VulnReportServiceDeps } from "./vulnreports/service-deps.js";
import { createVexService } from "./vulnreports/vex/vex-service.js";
import { createVulnerabilitiesService } from "./vulnreports/vulnerabilities-service.js";

/** What the composition root gives the services: what each domain's services need, together. */
export interface ServiceDeps
  extends IamServiceDeps,
    RegistryServiceDeps,
    SbomServiceDeps,
    SearchServiceDeps,
    SubscriptionsServiceDeps,
    ArtifactsServiceDeps,
    AdvisoriesServiceDeps,
    Omit<SecurityAdvisoryServiceDeps, "resolvedVulns">,
    VulnReportServiceDeps,
    Pick<Parameters<typeof createVulnerabilitiesService>[0], "rawReportLink">,
    EolTagsServiceDeps,
    AuditLogServiceDeps,
    UpstreamsServiceDeps,
    Omit<PoliciesServiceDeps, "store"> {
  /** The whole Store: each domain's deps name the sub-stores it uses, and the Store has them all. */
  store: Store;
  /** Finds and verifies image signatures (SignaturesService, the verified signers of tags). */
  signatures: SignatureVerifier;
  /** Told when a replication run was queued through the API (the worker looks for it at once). */
  replicationQueued?: (() => void) | undefined;
}

/** Every service of the platform API, bound to its implementation; served by every transport. */
export function createServiceBindings(deps: ServiceDeps): ServiceBinding[] {
  const ping = createPingService();
  const groups = createGroupsService(deps);
  const identities = createIdentitiesService(deps);
  const roles = createRolesService(deps);
  const roleBindings = createRoleBindingsService(deps);
  const identityProviders = createIdentityProvidersService(deps);
  const accountAssociations = createAccountAssociationsService(deps);
  const groupInvites = createGroupInvitesService(deps);
  const externalGroupRoleMappings = createExternalGroupRoleMappingsService(deps);
  const terms = createTermsService(deps);
  const repos = createReposService(deps);
  const tags = createTagsService(deps);
  const images = createImagesService(deps);
  const subscriptions = createSubscriptionsService(deps);
  const artifacts = createArtifactsService(deps);
  const advisories = createAdvisoriesService(deps);
  const securityAdvisory = createSecurityAdvisoryService({
    ...deps,
    resolvedVulns: createResolvedVulnsSource(deps.store),
  });
  return [
    bindService(PingService, ping),
    bindService(GroupsService, groups),
    bindService(IdentitiesService, identities),
    bindService(RolesService, roles),
    bindService(RoleBindingsService, roleBindings),
    bindService(IdentityProvidersService, identityProviders),
    bindService(AccountAssociationsService, accountAssociations),
    bindService(GroupInvitesService, groupInvites),
    bindService(ExternalGroupRoleMappingsService, externalGroupRoleMappings),
    bindService(TermsService, terms),
    bindService(ReposService, repos),
    bindService(TagsService, tags),
    bindService(ImagesService, images),
    bindService(SbomService, createSbomService(deps)),
    bindService(SearchService, createSearchService(deps)),
    bindService(SignaturesService, createSignaturesService(deps)),
    bindService(ImmutabilityRulesService, createImmutabilityRulesService(deps)),
    bindService(RetentionPoliciesService, createRetentionPoliciesService(retentionDepsOf(deps))),
    bindService(QuotasService, createQuotasService(deps)),
    bindService(InsightsService, createInsightsService(deps)),
    bindService(UpstreamsService, createUpstreamsService(deps)),
    bindService(PoliciesService, createPoliciesService(deps)),
    bindService(ReplicationRulesService, createReplicationRulesService(replicationDepsOf(deps))),
    bindService(ReplicationRunsService, createReplicationRunsService(deps)),
    bindService(SigningKeysService, createSigningKeysService(deps)),
    bindService(SubscriptionsService, subscriptions),
    bindService(ArtifactsService, artifacts),
    bindService(AdvisoriesService, advisories),
    bindService(SecurityAdvisoryService, securityAdvisory),
    bindService(AuditLogService, createAuditLogService(deps)),
    bindService(Registry, {
      ...createRegistryV1VulnReportHandlers(deps),
      ...createRegistryV1Handlers({ repos, tags, images }, deps.store),
      ...createEolTagsHandlers(deps),
    }),
    bindService(Vulnerabilities, createVulnerabilitiesService(deps)),
    bindService(Vex, createVexService(deps)),
    bindService(PingServiceV1, createPingV1Service(ping)),
    bindService(Auth, createAuthV1Service({ ...deps, identities })),
    bindService(Groups, createGroupsV1Service(groups)),
    bindService(Identities, createIdentitiesV1Service(identities)),
    bindService(Roles, createRolesV1Service(roles)),
    bindService(RoleBindings, createRoleBindingsV1Service(roleBindings, roles)),
    bindService(Terms, createTermsV1Service(terms)),
    bindService(IdentityProviders, createIdentityProvidersV1Service(identityProviders)),
    bindService(GroupAccountAssociations, createGroupAccountAssociationsV1Service(accountAssociations)),
    bindService(GroupInvites, createGroupInvitesV1Service(groupInvites)),
    bindService(
      ExternalGroupRoleMappings,
      createExternalGroupRoleMappingsV1Service(externalGroupRoleMappings),
    ),
    bindService(Subscriptions, createSubscriptionsV1Service(subscriptions)),
    bindService(Artifacts, createArtifactsV1Service(artifacts)),
    bindService(SecurityAdvisory, createSecurityAdvisoryV1Service(securityAdvisory)),
    bindService(Advisories, createAdvisoriesV1Service(advisories)),
  ];
}
