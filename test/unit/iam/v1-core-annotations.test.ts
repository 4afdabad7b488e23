import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type DescService, getOption } from "@bufbuild/protobuf";
import { iam } from "../../../src/gen/platform/annotations/iam_pb.js";
import { Groups } from "../../../src/gen/platform/iam/v1/groups_pb.js";
import { Identities } from "../../../src/gen/platform/iam/v1/identities_pb.js";
import { RoleBindings } from "../../../src/gen/platform/iam/v1/role_bindings_pb.js";
import { Roles } from "../../../src/gen/platform/iam/v1/roles_pb.js";
import { Terms } from "../../../src/gen/platform/iam/v1/terms_pb.js";
import { GroupsService } from "../../../src/gen/platform/iam/v2/groups_pb.js";
import { IdentitiesService } from "../../../src/gen/platform/iam/v2/identities_pb.js";
import { RoleBindingsService } from "../../../src/gen/platform/iam/v2/role_bindings_pb.js";
import { RolesService } from "../../../src/gen/platform/iam/v2/roles_pb.js";
import { TermsService } from "../../../src/gen/platform/iam/v2/terms_pb.js";

/**
 * Each v1 RPC and the v2 RPC its handler calls, with the v1 request field that holds the UIDP the
 * v2 one is scoped on ("" where both are unscoped). LookupGroup has no v2 counterpart.
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
];

describe("v1 IAM annotations", () => {
  it("every v1 RPC needs exactly the capabilities of its v2 counterpart, at the field holding the same UIDP", () => {
    for (const [v1Service, v1Name, v2Service, v2Name, v1Scope] of COUNTERPARTS) {
      const v1 = getOption(v1Service.method[v1Name]!, iam);
      const v2 = getOption(v2Service.method[v2Name]!, iam);
      const where = `${v1Service.typeName}.${v1Name}`;
      assert.deepEqual(v1.capabilities, v2.capabilities, `${where}: capabilities`);
      assert.equal(v1.unscoped, v2.unscoped, `${where}: unscoped`);
      assert.equal(v1.disabled, false, `${where}: authenticated`);
      assert.equal(v1.scope, v1Scope, `${where}: scope`);
      assert.equal(v2.scope === "", v1Scope === "", `${where}: scoped exactly when v2 is`);
    }
  });

  it("covers every v1 RPC of these services but LookupGroup", () => {
    const covered = new Set(COUNTERPARTS.map(([service, name]) => `${service.typeName}.${name}`));
    const all = [Groups, Identities, Roles, RoleBindings, Terms].flatMap((s) =>
      s.methods.map((m) => `${s.typeName}.${m.localName}`),
    );
    assert.deepEqual(
      all.filter((name) => !covered.has(name)),
      ["platform.iam.v1.Groups.lookupGroup"],
    );
  });
});
