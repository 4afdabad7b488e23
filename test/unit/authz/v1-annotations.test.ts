import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type DescService, getOption } from "@bufbuild/protobuf";
import { SecurityAdvisory } from "../../../src/gen/platform/advisory/v1/security_advisory_pb.js";
import { SecurityAdvisoryService } from "../../../src/gen/platform/advisory/v2/security_advisory_pb.js";
import { iam } from "../../../src/gen/platform/annotations/iam_pb.js";
import { Subscriptions } from "../../../src/gen/platform/events/v1/subscriptions_pb.js";
import { SubscriptionsService } from "../../../src/gen/platform/events/v2/subscriptions_pb.js";
import { GroupAccountAssociations } from "../../../src/gen/platform/iam/v1/account_associations_pb.js";
import { ExternalGroupRoleMappings } from "../../../src/gen/platform/iam/v1/external_group_role_mappings_pb.js";
import { GroupInvites } from "../../../src/gen/platform/iam/v1/group_invites_pb.js";
import { Groups } from "../../../src/gen/platform/iam/v1/groups_pb.js";
import { Identities } from "../../../src/gen/platform/iam/v1/identities_pb.js";
import { IdentityProviders } from "../../../src/gen/platform/iam/v1/identity_providers_pb.js";
import { RoleBindings } from "../../../src/gen/platform/iam/v1/role_bindings_pb.js";
import { Roles } from "../../../src/gen/platform/iam/v1/roles_pb.js";
import { Terms } from "../../../src/gen/platform/iam/v1/terms_pb.js";
import { AccountAssociationsService } from "../../../src/gen/platform/iam/v2/account_associations_pb.js";
import { ExternalGroupRoleMappingsService } from "../../../src/gen/platform/iam/v2/external_group_role_mappings_pb.js";
import { GroupInvitesService } from "../../../src/gen/platform/iam/v2/group_invites_pb.js";
import { GroupsService } from "../../../src/gen/platform/iam/v2/groups_pb.js";
import { IdentitiesService } from "../../../src/gen/platform/iam/v2/identities_pb.js";
import { IdentityProvidersService } from "../../../src/gen/platform/iam/v2/identity_providers_pb.js";
import { RoleBindingsService } from "../../../src/gen/platform/iam/v2/role_bindings_pb.js";
import { RolesService } from "../../../src/gen/platform/iam/v2/roles_pb.js";
import { TermsService } from "../../../src/gen/platform/iam/v2/terms_pb.js";
import { Artifacts } from "../../../src/gen/platform/libraries/v1/artifacts_pb.js";
import { ArtifactsService } from "../../../src/gen/platform/libraries/v2/artifacts_pb.js";
import { PingService as PingServiceV1 } from "../../../src/gen/platform/ping/v1/ping_pb.js";
import { PingService } from "../../../src/gen/platform/ping/v2/ping_pb.js";
import { Registry } from "../../../src/gen/platform/registry/v1/registry_pb.js";
import { ImagesService } from "../../../src/gen/platform/registry/v2/images_pb.js";
import { ReposService } from "../../../src/gen/platform/registry/v2/repos_pb.js";
import { TagsService } from "../../../src/gen/platform/registry/v2/tags_pb.js";
import { Advisories } from "../../../src/gen/platform/vulnerabilities/v1/advisories_pb.js";
import { AdvisoriesService } from "../../../src/gen/platform/vulnerabilities/v2/advisories_pb.js";

/**
 * Each v1 RPC and the v2 RPC its handler calls, with the v1 request field that holds the UIDP the
 * v2 one is scoped on ("" where both are unscoped). V1_ONLY has no v2 counterpart.
 */
const COUNTERPARTS: ReadonlyArray<[DescService, string, DescService, string, string]> = [
  [Groups, "create", GroupsService, "createGroup", ""],
  [Groups, "list", GroupsService, "listGroups", ""],
  [Groups, "update", GroupsService, "updateGroup", "id"],
  [Groups, "delete", GroupsService, "deleteGroup", "id"],
  [Identities, "create", IdentitiesService, "createIdentity", "parent_id"],
  [Identities, "list", IdentitiesService, "listIdentities", ""],
  [Identities, "update", IdentitiesService, "updateIdentity", "id"],
  [Identities, "delete", IdentitiesService, "deleteIdentity", "id"],
  [Identities, "lookup", IdentitiesService, "lookupIdentity", ""],
  [Roles, "create", RolesService, "createRole", "parent_id"],
  [Roles, "list", RolesService, "listRoles", ""],
  [Roles, "update", RolesService, "updateRole", "id"],
  [Roles, "delete", RolesService, "deleteRole", "id"],
  [RoleBindings, "create", RoleBindingsService, "createRoleBinding", "parent"],
  [RoleBindings, "createBatch", RoleBindingsService, "batchCreateRoleBindings", "parent"],
  [RoleBindings, "list", RoleBindingsService, "listRoleBindings", ""],
  [RoleBindings, "update", RoleBindingsService, "updateRoleBinding", "id"],
  [RoleBindings, "delete", RoleBindingsService, "deleteRoleBinding", "id"],
  [Terms, "accept", TermsService, "acceptTerms", "group"],
  [Terms, "list", TermsService, "listTermsAcceptances", "group"],
  [IdentityProviders, "create", IdentityProvidersService, "createIdentityProvider", "parent_id"],
  [IdentityProviders, "list", IdentityProvidersService, "listIdentityProviders", ""],
  [IdentityProviders, "update", IdentityProvidersService, "updateIdentityProvider", "id"],
  [IdentityProviders, "delete", IdentityProvidersService, "deleteIdentityProvider", "id"],
  [GroupAccountAssociations, "create", AccountAssociationsService, "createAccountAssociation", "group"],
  [GroupAccountAssociations, "update", AccountAssociationsService, "updateAccountAssociation", "group"],
  [GroupAccountAssociations, "list", AccountAssociationsService, "listAccountAssociations", ""],
  [GroupAccountAssociations, "delete", AccountAssociationsService, "deleteAccountAssociation", "group"],
  [GroupAccountAssociations, "check", AccountAssociationsService, "getAccountAssociation", "group"],
  [GroupInvites, "create", GroupInvitesService, "createGroupInvite", "group"],
  [GroupInvites, "list", GroupInvitesService, "listGroupInvites", ""],
  [GroupInvites, "delete", GroupInvitesService, "deleteGroupInvite", "id"],
  [ExternalGroupRoleMappings, "list", ExternalGroupRoleMappingsService, "listExternalGroupRoleMappings", ""],
  [ExternalGroupRoleMappings, "get", ExternalGroupRoleMappingsService, "getExternalGroupRoleMapping", "uid"],
  [
    ExternalGroupRoleMappings,
    "create",
    ExternalGroupRoleMappingsService,
    "createExternalGroupRoleMapping",
    "parent_id",
  ],
  [
    ExternalGroupRoleMappings,
    "delete",
    ExternalGroupRoleMappingsService,
    "deleteExternalGroupRoleMapping",
    "id",
  ],
  [
    ExternalGroupRoleMappings,
    "batchDelete",
    ExternalGroupRoleMappingsService,
    "batchDeleteExternalGroupRoleMappings",
    "parent_id",
  ],
  [Registry, "listRepos", ReposService, "listRepos", ""],
  [Registry, "createRepo", ReposService, "createRepo", "parent_id"],
  [Registry, "updateRepo", ReposService, "updateRepo", "id"],
  [Registry, "deleteRepo", ReposService, "deleteRepo", "id"],
  [Registry, "listTags", TagsService, "listTags", ""],
  [Registry, "createTag", TagsService, "createTag", "repo_id"],
  [Registry, "updateTag", TagsService, "createTag", "id"],
  [Registry, "deleteTag", TagsService, "deleteTag", "id"],
  [Registry, "listTagHistory", TagsService, "getTag", "parent_id"],
  [Registry, "getArchs", ImagesService, "getArchitectures", "repo_id"],
  [Registry, "getSize", ImagesService, "getSize", "repo_id"],
  [Subscriptions, "list", SubscriptionsService, "listSubscriptions", ""],
  [Subscriptions, "create", SubscriptionsService, "createSubscription", "parent_id"],
  [Subscriptions, "delete", SubscriptionsService, "deleteSubscription", "id"],
  [Artifacts, "list", ArtifactsService, "listArtifacts", ""],
  [Artifacts, "listVersions", ArtifactsService, "listArtifactVersions", ""],
  [Artifacts, "count", ArtifactsService, "countArtifacts", ""],
  [SecurityAdvisory, "listDocuments", SecurityAdvisoryService, "listDocuments", ""],
  [SecurityAdvisory, "listVulnerabilityMetadata", SecurityAdvisoryService, "listVulnerabilityMetadata", ""],
  [SecurityAdvisory, "resolvedVulns", SecurityAdvisoryService, "resolvedVulns", ""],
  [Advisories, "list", AdvisoriesService, "listAdvisories", ""],
  [PingServiceV1, "ping", PingService, "ping", ""],
];

/** The v1 services that face a v2 one (Auth and Vulnerabilities have none: they act on the caller or are v1-only). */
const FACES: readonly DescService[] = [
  Groups,
  Identities,
  Roles,
  RoleBindings,
  Terms,
  IdentityProviders,
  GroupAccountAssociations,
  GroupInvites,
  ExternalGroupRoleMappings,
  Registry,
  Subscriptions,
  Artifacts,
  SecurityAdvisory,
  Advisories,
  PingServiceV1,
];

/** The RPCs of those services with no v2 counterpart, each with its own capabilities. */
const V1_ONLY = [
  "platform.iam.v1.Groups.lookupGroup",
  "platform.registry.v1.Registry.getVulnReport",
  "platform.registry.v1.Registry.listEolTags",
];

describe("v1 annotations", () => {
  it("every v1 RPC needs exactly the capabilities of its v2 counterpart, at the field holding the same UIDP", () => {
    for (const [v1Service, v1Name, v2Service, v2Name, v1Scope] of COUNTERPARTS) {
      const v1 = getOption(v1Service.method[v1Name]!, iam);
      const v2 = getOption(v2Service.method[v2Name]!, iam);
      const where = `${v1Service.typeName}.${v1Name}`;
      assert.deepEqual(v1.capabilities, v2.capabilities, `${where}: capabilities`);
      assert.equal(v1.unscoped, v2.unscoped, `${where}: unscoped`);
      assert.equal(v1.disabled, v2.disabled, `${where}: authenticated exactly when v2 is`);
      assert.equal(v1.scope, v1Scope, `${where}: scope`);
      assert.equal(v2.scope === "", v1Scope === "", `${where}: scoped exactly when v2 is`);
    }
  });

  it("covers every v1 RPC of the faces but the v1-only ones", () => {
    const covered = new Set(COUNTERPARTS.map(([service, name]) => `${service.typeName}.${name}`));
    const all = FACES.flatMap((s) => s.methods.map((m) => `${s.typeName}.${m.localName}`));
    assert.deepEqual(
      all.filter((name) => !covered.has(name)),
      V1_ONLY,
    );
  });
});
