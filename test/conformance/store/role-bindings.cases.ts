import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { newChildUid, newRootUid } from "../../../src/core/uidp.js";
import type { RoleBindingRow } from "../../../src/storage/iam-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import {
  assertAlreadyExists,
  assertDomainError,
  firstPage,
  groupRow,
  roleRow,
  sortedUids,
  T0,
} from "./fixtures.js";

function binding(groupUid: string, identityUid: string, roleUid: string, time = T0): RoleBindingRow {
  return { uid: newChildUid(groupUid), groupUid, identityUid, roleUid, createTime: time, updateTime: time };
}

/** RoleBindingStore: CRUD, the (group, identity, role) uniqueness, filters, grantsOf, counts, deleteByGroup. */
export function roleBindingCases(db: TestDatabase): void {
  describe("role bindings", () => {
    let store: Store;
    let org: string;
    let team: string;
    before(async () => {
      store = await db.openFresh();
      const o = groupRow("", "rb-org");
      const t = groupRow(o.uid, "team");
      await store.groups.insert(o);
      await store.groups.insert(t);
      org = o.uid;
      team = t.uid;
    });

    it("inserts, reads, updates and deletes a binding", async () => {
      const row = binding(org, newRootUid(), newRootUid());
      await store.roleBindings.insert(row);
      assert.deepEqual(await store.roleBindings.get(row.uid), row);
      const changed = { ...row, roleUid: newRootUid(), updateTime: T0 + 1 };
      assert.equal(await store.roleBindings.update(changed), true);
      assert.deepEqual(await store.roleBindings.get(row.uid), changed);
      assert.equal(await store.roleBindings.update(binding(org, "x", "y")), false);
      assert.equal(await store.roleBindings.delete(row.uid), true);
      assert.equal(await store.roleBindings.get(row.uid), undefined);
      assert.equal(await store.roleBindings.delete(row.uid), false);
    });

    it("rejects the same identity holding the same role at the same group", async () => {
      const identity = newRootUid();
      const role = newRootUid();
      await store.roleBindings.insert(binding(org, identity, role));
      await assertAlreadyExists(store.roleBindings.insert(binding(org, identity, role)));
      await store.roleBindings.insert(binding(team, identity, role));
      const other = binding(org, identity, newRootUid());
      await store.roleBindings.insert(other);
      await assertAlreadyExists(store.roleBindings.update({ ...other, roleUid: role }));
    });

    it("filters by identity, group and role, and cannot order by name", async () => {
      const identity = newRootUid();
      const role = newRootUid();
      const a = binding(org, identity, role);
      const b = binding(team, identity, newRootUid());
      const c = binding(team, newRootUid(), role);
      for (const row of [a, b, c]) await store.roleBindings.insert(row);

      const byIdentity = await store.roleBindings.list({ identityUid: identity }, firstPage());
      assert.deepEqual(sortedUids(byIdentity.rows), sortedUids([a, b]));
      assert.equal(byIdentity.total, 2n);
      const byRole = await store.roleBindings.list({ roleUid: role }, firstPage());
      assert.deepEqual(sortedUids(byRole.rows), sortedUids([a, c]));
      const byGroup = await store.roleBindings.list({ groupUid: team, identityUid: identity }, firstPage());
      assert.deepEqual(sortedUids(byGroup.rows), [b.uid]);
      const under = await store.roleBindings.list(
        { uidp: { descendantsOf: team }, roleUid: role },
        firstPage(10, "create_time"),
      );
      assert.deepEqual(sortedUids(under.rows), [c.uid]);
      await assertDomainError(store.roleBindings.list({}, firstPage(10, "name")), Code.InvalidArgument);
    });

    it("grantsOf joins roles and skips bindings of deleted roles; counts by role and identity", async () => {
      const identity = newRootUid();
      const viewer = roleRow(org, "g-viewer", [1, 2]);
      const pusher = roleRow(org, "g-pusher", [5]);
      const gone = roleRow(org, "g-gone", [9]);
      for (const r of [viewer, pusher, gone]) await store.roles.insert(r);
      await store.roleBindings.insert(binding(org, identity, viewer.uid));
      await store.roleBindings.insert(binding(team, identity, pusher.uid));
      await store.roleBindings.insert(binding(team, identity, gone.uid));
      await store.roleBindings.insert(binding(team, newRootUid(), pusher.uid));
      await store.roles.delete(gone.uid);

      const grants = await store.roleBindings.grantsOf(identity);
      const expected = [
        { groupUid: org, roleUid: viewer.uid, capabilities: [1, 2] },
        { groupUid: team, roleUid: pusher.uid, capabilities: [5] },
      ];
      const key = (g: { groupUid: string; roleUid: string }) => `${g.groupUid} ${g.roleUid}`;
      assert.deepEqual(
        [...grants].sort((x, y) => key(x).localeCompare(key(y))),
        expected.sort((x, y) => key(x).localeCompare(key(y))),
      );
      assert.deepEqual(await store.roleBindings.grantsOf(newRootUid()), []);

      assert.equal(await store.roleBindings.countByRole(pusher.uid), 2);
      assert.equal(await store.roleBindings.countByRole(gone.uid), 1);
      assert.equal(await store.roleBindings.countByIdentity(identity), 3);
      assert.equal(await store.roleBindings.countByIdentity(newRootUid()), 0);
    });

    it("deleteByGroup removes the bindings directly under the group only", async () => {
      const g = groupRow(org, "del-by-group");
      const sub = groupRow(g.uid, "sub");
      await store.groups.insert(g);
      await store.groups.insert(sub);
      const direct = [binding(g.uid, newRootUid(), newRootUid()), binding(g.uid, newRootUid(), newRootUid())];
      const nested = binding(sub.uid, newRootUid(), newRootUid());
      for (const row of [...direct, nested]) await store.roleBindings.insert(row);
      assert.equal(await store.roleBindings.deleteByGroup(g.uid), 2);
      assert.equal(await store.roleBindings.get(direct[0]?.uid ?? ""), undefined);
      assert.deepEqual(await store.roleBindings.get(nested.uid), nested);
      assert.equal(await store.roleBindings.deleteByGroup(g.uid), 0);
    });
  });
}
