import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { newChildUid, newRootUid } from "../../../src/core/uidp.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { assertAlreadyExists, firstPage, groupRow, repoRow, roleRow, sortedUids, T0 } from "./fixtures.js";

/** GroupStore: CRUD, sibling-name uniqueness, children counts, name filter. */
export function groupCases(db: TestDatabase): void {
  describe("groups", () => {
    let store: Store;
    before(async () => {
      store = await db.openFresh();
    });

    it("inserts, reads, updates and deletes a group", async () => {
      const org = groupRow("", "acme");
      await store.groups.insert({ ...org, verified: true });
      assert.deepEqual(await store.groups.get(org.uid), { ...org, verified: true });
      assert.deepEqual(await store.groups.getByName("", "acme"), { ...org, verified: true });

      const changed = { ...org, name: "acme-2", description: "d2", verified: false, updateTime: T0 + 5 };
      assert.equal(await store.groups.update(changed), true);
      assert.deepEqual(await store.groups.get(org.uid), changed);
      assert.equal(await store.groups.getByName("", "acme"), undefined);

      assert.equal(await store.groups.delete(org.uid), true);
      assert.equal(await store.groups.get(org.uid), undefined);
      assert.equal(await store.groups.delete(org.uid), false);
    });

    it("keeps createTime on update", async () => {
      const org = groupRow("", "keeps-create-time");
      await store.groups.insert(org);
      await store.groups.update({ ...org, createTime: T0 + 99, updateTime: T0 + 100 });
      const stored = await store.groups.get(org.uid);
      assert.equal(stored?.createTime, T0);
      assert.equal(stored?.updateTime, T0 + 100);
    });

    it("answers undefined / false for missing groups", async () => {
      const missing = groupRow("", "missing");
      assert.equal(await store.groups.get(missing.uid), undefined);
      assert.equal(await store.groups.getByName("", "no-such-group"), undefined);
      assert.equal(await store.groups.update(missing), false);
      assert.equal(await store.groups.delete(missing.uid), false);
    });

    it("getMany returns the existing groups among the uids", async () => {
      const a = groupRow("", "many-a");
      const b = groupRow(a.uid, "many-b");
      await store.groups.insert(a);
      await store.groups.insert(b);
      assert.deepEqual(
        sortedUids(await store.groups.getMany([a.uid, b.uid, newRootUid()])),
        sortedUids([a, b]),
      );
      assert.deepEqual(await store.groups.getMany([]), []);
    });

    it("rejects a sibling with the same name as ALREADY_EXISTS, on insert and update", async () => {
      const org = groupRow("", "unique-org");
      await store.groups.insert(org);
      await assertAlreadyExists(store.groups.insert(groupRow("", "unique-org")));

      const team = groupRow(org.uid, "team");
      await store.groups.insert(team);
      await assertAlreadyExists(store.groups.insert(groupRow(org.uid, "team")));
      // The same name under another parent is fine.
      const other = groupRow("", "unique-org-2");
      await store.groups.insert(other);
      await store.groups.insert(groupRow(other.uid, "team"));

      const sibling = groupRow(org.uid, "sibling");
      await store.groups.insert(sibling);
      await assertAlreadyExists(store.groups.update({ ...sibling, name: "team" }));
      assert.equal((await store.groups.get(sibling.uid))?.name, "sibling");
    });

    it("rejects a duplicate uid as ALREADY_EXISTS", async () => {
      const org = groupRow("", "dup-uid");
      await store.groups.insert(org);
      await assertAlreadyExists(store.groups.insert({ ...org, name: "dup-uid-2" }));
    });

    it("counts direct children of every kind", async () => {
      const org = groupRow("", "parent-org");
      await store.groups.insert(org);
      assert.deepEqual(await store.groups.children(org.uid), {
        groups: 0,
        repos: 0,
        identities: 0,
        roles: 0,
        roleBindings: 0,
      });

      const team = groupRow(org.uid, "team");
      await store.groups.insert(team);
      await store.groups.insert(groupRow(org.uid, "team-2"));
      await store.groups.insert(groupRow(team.uid, "grandchild")); // not a direct child of org
      await store.repos.insert(repoRow(org.uid, "app"));
      await store.repos.insert(repoRow(team.uid, "deeper-app"));
      const identityUid = newChildUid(org.uid);
      await store.identities.insert({
        uid: identityUid,
        name: "robot",
        description: "",
        email: "",
        createTime: T0,
        updateTime: T0,
      });
      const role = roleRow(org.uid, "viewer", [1]);
      await store.roles.insert(role);
      await store.roleBindings.insert({
        uid: newChildUid(org.uid),
        groupUid: org.uid,
        identityUid,
        roleUid: role.uid,
        createTime: T0,
        updateTime: T0,
      });

      assert.deepEqual(await store.groups.children(org.uid), {
        groups: 2,
        repos: 1,
        identities: 1,
        roles: 1,
        roleBindings: 1,
      });
      assert.deepEqual(await store.groups.children(team.uid), {
        groups: 1,
        repos: 1,
        identities: 0,
        roles: 0,
        roleBindings: 0,
      });
    });

    it("filters a list by exact name", async () => {
      const org = groupRow("", "name-filter");
      await store.groups.insert(org);
      const a = groupRow(org.uid, "shared");
      const b = groupRow(a.uid, "shared");
      await store.groups.insert(a);
      await store.groups.insert(b);
      await store.groups.insert(groupRow(org.uid, "shared-not"));
      const slice = await store.groups.list(
        { name: "shared", uidp: { descendantsOf: org.uid } },
        firstPage(),
      );
      assert.deepEqual(sortedUids(slice.rows), sortedUids([a, b]));
      assert.equal(slice.total, 2n);
    });
  });
}
