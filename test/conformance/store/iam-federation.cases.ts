import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { newChildUid, newRootUid } from "../../../src/core/uidp.js";
import type {
  AccountAssociationRow,
  ExternalGroupRoleMappingRow,
  GroupInviteRow,
  IdentityProviderRow,
  TermsAcceptanceRow,
} from "../../../src/storage/iam-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { assertAlreadyExists, assertDomainError, firstPage, groupRow, sortedUids, T0 } from "./fixtures.js";

function idpRow(groupUid: string, name: string, time = T0): IdentityProviderRow {
  return {
    uid: newChildUid(groupUid),
    groupUid,
    name,
    description: `idp ${name}`,
    defaultRole: newRootUid(),
    oidc: {
      issuer: "https://login.example.com",
      clientId: `client-${name}`,
      clientSecret: `secret-${name}`,
      additionalScopes: ["email", "profile"],
      groupsClaim: "groups",
      correlationRule: 1,
      pkceEnabled: false,
    },
    createTime: time,
    updateTime: time,
  };
}

function mappingRow(idpUid: string, externalGroupId: string, roleUid: string, scope: string) {
  return {
    uid: newChildUid(idpUid),
    identityProviderUid: idpUid,
    externalGroupId,
    roleUid,
    scope,
    createTime: T0,
  } satisfies ExternalGroupRoleMappingRow;
}

function inviteRow(groupUid: string, codeHash: string, time = T0): GroupInviteRow {
  return {
    uid: newChildUid(groupUid),
    groupUid,
    roleUid: newRootUid(),
    email: "",
    codeHash,
    keyId: `key-${codeHash}`,
    singleUse: true,
    expirationTime: time + 3_600_000,
    createTime: time,
  };
}

function acceptance(groupUid: string, docId: string, time = T0): TermsAcceptanceRow {
  return { uid: newChildUid(groupUid), groupUid, docId, acceptedBy: newRootUid(), createTime: time };
}

/**
 * The IAM federation stores: identity providers (secret kept, mappings go with them), account
 * associations (uid = group), invites (by code hash, single delete wins), external group role
 * mappings (unique, forProvider) and terms acceptances (idempotent per group and document).
 */
export function iamFederationCases(db: TestDatabase): void {
  describe("IAM federation stores", () => {
    let store: Store;
    let org: string;
    let team: string;
    before(async () => {
      store = await db.openFresh();
      const o = groupRow("", "fed-org");
      const t = groupRow(o.uid, "team");
      await store.groups.insert(o);
      await store.groups.insert(t);
      org = o.uid;
      team = t.uid;
    });

    it("identity providers: round-trip with the client secret, unique name per group, update, counts", async () => {
      const row = idpRow(org, "okta");
      await store.identityProviders.insert(row);
      assert.deepEqual(await store.identityProviders.get(row.uid), row, "row round-trips, secret included");
      await assertAlreadyExists(store.identityProviders.insert(idpRow(org, "okta")));
      await store.identityProviders.insert(idpRow(team, "okta"));

      const changed: IdentityProviderRow = {
        ...row,
        description: "changed",
        oidc: { ...row.oidc, clientSecret: "", pkceEnabled: true, additionalScopes: [] },
        updateTime: T0 + 5,
      };
      assert.equal(await store.identityProviders.update(changed), true, "update reports the row");
      assert.deepEqual(await store.identityProviders.get(row.uid), changed, "update stored every field");
      assert.equal(await store.identityProviders.update({ ...changed, uid: newChildUid(org) }), false);

      assert.equal(await store.identityProviders.countByGroup(org), 1, "one provider directly under org");
      assert.equal(await store.identityProviders.countByDefaultRole(row.defaultRole), 1, "by default role");
      assert.equal(await store.identityProviders.countByDefaultRole(newRootUid()), 0, "no provider");

      const listed = await store.identityProviders.list({ name: "okta" }, firstPage());
      assert.equal(listed.total, 2n, "two providers named okta");
      const under = await store.identityProviders.list(
        { uidp: { descendantsOf: team } },
        firstPage(10, "name"),
      );
      assert.equal(under.rows.length, 1, "one provider under team");
      const scoped = await store.identityProviders.list(
        { within: { all: false, uids: [team] } },
        firstPage(10, "update_time", true),
      );
      assert.equal(scoped.rows[0]?.groupUid, team, "within restricts to team");
    });

    it("identity providers: delete takes the provider's mappings with it", async () => {
      const idp = idpRow(org, "entra");
      await store.identityProviders.insert(idp);
      const role = newRootUid();
      const m1 = mappingRow(idp.uid, "admins", role, org);
      const m2 = mappingRow(idp.uid, "devs", role, org);
      await store.externalGroupRoleMappings.insert(m1);
      await store.externalGroupRoleMappings.insert(m2);
      assert.equal(await store.identityProviders.delete(idp.uid), true, "deleted");
      assert.equal(await store.identityProviders.get(idp.uid), undefined, "provider gone");
      assert.equal(await store.externalGroupRoleMappings.get(m1.uid), undefined, "mapping 1 gone");
      assert.equal(await store.externalGroupRoleMappings.get(m2.uid), undefined, "mapping 2 gone");
      const left = await store.externalGroupRoleMappings.list({ identityProviderUid: idp.uid }, firstPage());
      assert.equal(left.total, 0n, "no mapping of the deleted provider is listed");
      assert.equal(await store.identityProviders.delete(idp.uid), false, "second delete finds nothing");
    });

    it("external group role mappings: unique, filtered, forProvider, countByRole, missing provider", async () => {
      const idp = idpRow(org, "google");
      const other = idpRow(org, "github");
      await store.identityProviders.insert(idp);
      await store.identityProviders.insert(other);
      const admin = newRootUid();
      const viewer = newRootUid();
      const a = mappingRow(idp.uid, "admins", admin, org);
      const b = mappingRow(idp.uid, "admins", viewer, org);
      const c = mappingRow(idp.uid, "Devs", viewer, org);
      const d = mappingRow(other.uid, "admins", admin, org);
      for (const row of [a, b, c, d]) await store.externalGroupRoleMappings.insert(row);
      assert.deepEqual(await store.externalGroupRoleMappings.get(a.uid), a, "round-trip");
      await assertAlreadyExists(
        store.externalGroupRoleMappings.insert(mappingRow(idp.uid, "admins", admin, org)),
      );
      await assertDomainError(
        store.externalGroupRoleMappings.insert(mappingRow(newChildUid(org), "x", admin, org)),
        Code.NotFound,
      );

      const found = await store.externalGroupRoleMappings.forProvider(idp.uid, ["admins", "devs", "nope"]);
      assert.deepEqual(sortedUids(found), sortedUids([a, b]), "case-sensitive match on the group id");
      assert.deepEqual(await store.externalGroupRoleMappings.forProvider(idp.uid, []), [], "no groups");

      const byRole = await store.externalGroupRoleMappings.list({ roleUid: viewer }, firstPage());
      assert.deepEqual(sortedUids(byRole.rows), sortedUids([b, c]), "filter by role");
      const byGroup = await store.externalGroupRoleMappings.list(
        { externalGroupId: "admins", identityProviderUid: idp.uid },
        firstPage(10, "create_time", true),
      );
      assert.deepEqual(sortedUids(byGroup.rows), sortedUids([a, b]), "filter by provider and group");
      const children = await store.externalGroupRoleMappings.list(
        { uidp: { childrenOf: other.uid } },
        firstPage(),
      );
      assert.deepEqual(sortedUids(children.rows), [d.uid], "children of the other provider");
      await assertDomainError(
        store.externalGroupRoleMappings.list({}, firstPage(10, "name")),
        Code.InvalidArgument,
      );
      assert.equal(await store.externalGroupRoleMappings.countByRole(admin), 2, "count by role");
      assert.equal(await store.externalGroupRoleMappings.delete(a.uid), true, "delete");
      assert.equal(await store.externalGroupRoleMappings.delete(a.uid), false, "delete again");
      assert.equal(await store.externalGroupRoleMappings.countByRole(admin), 1, "count after delete");
    });

    it("account associations: one per group, provider blocks round-trip, list and delete", async () => {
      const row: AccountAssociationRow = {
        uid: org,
        name: "clouds",
        description: "",
        amazon: { account: "123456789012" },
        google: { projectId: "my-project", projectNumber: "1234" },
        azure: { tenantId: "6f1d3c4e-0000-4000-8000-000000000001", clientIds: { api: "a-b" } },
        github: { appInstallations: { "42": [{ installationId: "7", name: "acme" }] } },
        createTime: T0,
        updateTime: T0,
      };
      await store.accountAssociations.insert(row);
      assert.deepEqual(await store.accountAssociations.get(org), row, "round-trip");
      await assertAlreadyExists(store.accountAssociations.insert({ ...row, name: "again" }));
      const sub: AccountAssociationRow = {
        uid: team,
        name: "sub",
        description: "",
        createTime: T0,
        updateTime: T0,
      };
      await store.accountAssociations.insert(sub);
      assert.deepEqual(await store.accountAssociations.get(team), sub, "no provider blocks");

      const { amazon: _gone, ...withoutAmazon } = row;
      const updated = { ...withoutAmazon, description: "d", updateTime: T0 + 1 };
      assert.equal(await store.accountAssociations.update(updated), true, "update");
      assert.deepEqual(await store.accountAssociations.get(org), updated, "amazon block removed");

      const listed = await store.accountAssociations.list({ uidp: { descendantsOf: org } }, firstPage());
      assert.deepEqual(sortedUids(listed.rows), sortedUids([row, sub]), "both listed under org");
      const children = await store.accountAssociations.list({ uidp: { childrenOf: org } }, firstPage());
      assert.deepEqual(sortedUids(children.rows), [team], "children of org: the team's association");
      assert.equal(await store.accountAssociations.delete(team), true, "delete");
      assert.equal(await store.accountAssociations.delete(team), false, "delete again");
    });

    it("group invites: by code hash (unique), key id filter, exactly one delete wins, deleteByGroup", async () => {
      const g = groupRow(org, "invites");
      await store.groups.insert(g);
      const first = inviteRow(g.uid, "a".repeat(64), T0);
      const second = {
        ...inviteRow(g.uid, "b".repeat(64), T0 + 10),
        email: "x@example.com",
        singleUse: false,
      };
      await store.groupInvites.insert(first);
      await store.groupInvites.insert(second);
      assert.deepEqual(await store.groupInvites.get(first.uid), first, "round-trip");
      assert.deepEqual(await store.groupInvites.getByCodeHash("b".repeat(64)), second, "by code hash");
      assert.equal(await store.groupInvites.getByCodeHash("c".repeat(64)), undefined, "unknown hash");
      await assertAlreadyExists(store.groupInvites.insert(inviteRow(g.uid, "a".repeat(64))));

      const byKey = await store.groupInvites.list({ keyId: second.keyId }, firstPage());
      assert.deepEqual(sortedUids(byKey.rows), [second.uid], "filter by key id");
      const newestFirst = await store.groupInvites.list(
        { uidp: { childrenOf: g.uid } },
        firstPage(10, "create_time", true),
      );
      assert.deepEqual(
        newestFirst.rows.map((r) => r.uid),
        [second.uid, first.uid],
        "create_time desc",
      );

      const results = await Promise.all([
        store.groupInvites.delete(first.uid),
        store.groupInvites.delete(first.uid),
      ]);
      assert.deepEqual(results.sort(), [false, true], "exactly one concurrent delete wins");
      assert.equal(await store.groupInvites.deleteByGroup(g.uid), 1, "the remaining invite");
      assert.equal(await store.groupInvites.get(second.uid), undefined, "gone with its group");
    });

    it("terms acceptances: idempotent per group and document, listed for a group and its ancestors", async () => {
      const g = groupRow(org, "terms");
      await store.groups.insert(g);
      const sub = groupRow(g.uid, "sub");
      await store.groups.insert(sub);
      const atOrg = acceptance(org, "sfdpa.v1", T0);
      assert.equal(await store.termsAcceptances.accept(atOrg), true, "first accept inserts");
      assert.equal(
        await store.termsAcceptances.accept(acceptance(org, "sfdpa.v1", T0 + 1)),
        false,
        "second accept of the same document is a no-op",
      );
      const atSub = acceptance(sub.uid, "skills-tos.v1", T0 + 2);
      const atSibling = acceptance(team, "skills-tos.v1", T0 + 3);
      await store.termsAcceptances.accept(atSub);
      await store.termsAcceptances.accept(atSibling);
      const racers = await Promise.all([
        store.termsAcceptances.accept(acceptance(sub.uid, "guardener-tos.v1", T0 + 4)),
        store.termsAcceptances.accept(acceptance(sub.uid, "guardener-tos.v1", T0 + 4)),
      ]);
      assert.deepEqual(racers.sort(), [false, true], "concurrent accepts leave one row");

      const listed = await store.termsAcceptances.list(
        { groupUids: [org, g.uid, sub.uid] },
        firstPage(10, "create_time"),
      );
      assert.deepEqual(
        listed.rows.map((r) => r.docId),
        ["sfdpa.v1", "skills-tos.v1", "guardener-tos.v1"],
        "the group's and its ancestors' acceptances, oldest first; not the sibling's",
      );
      assert.equal(listed.total, 3n, "total");
      assert.deepEqual(listed.rows[0], atOrg, "round-trip");
      assert.equal(await store.termsAcceptances.deleteByGroup(sub.uid), 2, "deleteByGroup");
      const after = await store.termsAcceptances.list({ groupUids: [sub.uid] }, firstPage());
      assert.equal(after.total, 0n, "none left at sub");
    });
  });
}
