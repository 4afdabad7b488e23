import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { deterministicRootUid, newRootUid } from "../../../src/core/uidp.js";
import type { RoleRow } from "../../../src/storage/iam-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { assertAlreadyExists, firstPage, groupRow, roleRow, sortedUids, T0 } from "./fixtures.js";

function builtIn(name: string, capabilities: number[]): RoleRow {
  return {
    uid: deterministicRootUid(`wharf:role:${name}:${newRootUid()}`),
    name,
    description: `built-in ${name}`,
    capabilities,
    builtIn: true,
    createTime: T0,
    updateTime: T0,
  };
}

/** RoleStore: CRUD, capabilities round-trip, built-in upsert, includeBuiltIn. */
export function roleCases(db: TestDatabase): void {
  describe("roles", () => {
    let store: Store;
    before(async () => {
      store = await db.openFresh();
    });

    it("inserts, reads, updates and deletes a role", async () => {
      const org = groupRow("", "role-org");
      await store.groups.insert(org);
      const role = roleRow(org.uid, "deployer", [3, 17, 250]);
      await store.roles.insert(role);
      assert.deepEqual(await store.roles.get(role.uid), role);
      assert.deepEqual(await store.roles.getMany([role.uid, newRootUid()]), [role]);

      const changed = {
        ...role,
        name: "deployer2",
        capabilities: [],
        createTime: T0 + 9,
        updateTime: T0 + 10,
      };
      assert.equal(await store.roles.update(changed), true);
      assert.deepEqual(await store.roles.get(role.uid), { ...changed, createTime: T0 });
      assert.equal(await store.roles.update(roleRow(org.uid, "ghost", [])), false);

      assert.equal(await store.roles.delete(role.uid), true);
      assert.equal(await store.roles.get(role.uid), undefined);
      assert.equal(await store.roles.delete(role.uid), false);
    });

    it("rejects a duplicate uid as ALREADY_EXISTS", async () => {
      const role = roleRow("", "dup", [1]);
      await store.roles.insert(role);
      await assertAlreadyExists(store.roles.insert({ ...role, name: "dup2" }));
    });

    it("upsertBuiltIn inserts, then replaces everything but createTime", async () => {
      const viewer = builtIn("viewer", [1, 2]);
      await store.roles.upsertBuiltIn(viewer);
      assert.deepEqual(await store.roles.get(viewer.uid), viewer);

      const v2 = {
        ...viewer,
        description: "new text",
        capabilities: [1, 2, 3],
        createTime: T0 + 50,
        updateTime: T0 + 60,
      };
      await store.roles.upsertBuiltIn(v2);
      assert.deepEqual(await store.roles.get(viewer.uid), { ...v2, createTime: T0 });
    });

    it("includeBuiltIn lets built-in roles through uidp and within, but not through name", async () => {
      const org = groupRow("", "bi-org");
      await store.groups.insert(org);
      const custom = roleRow(org.uid, "viewer", [1]);
      const otherCustom = roleRow(org.uid, "pusher", [2]);
      await store.roles.insert(custom);
      await store.roles.insert(otherCustom);
      const viewer = builtIn("viewer", [1]);
      const owner = builtIn("owner", [1, 2, 3]);
      await store.roles.upsertBuiltIn(viewer);
      await store.roles.upsertBuiltIn(owner);
      const within = { all: false as const, uids: [org.uid] };

      const scoped = await store.roles.list({ within }, firstPage());
      assert.deepEqual(sortedUids(scoped.rows), sortedUids([custom, otherCustom]));

      const withBuiltIn = await store.roles.list({ within, includeBuiltIn: true }, firstPage());
      const ids = sortedUids(withBuiltIn.rows);
      for (const r of [custom, otherCustom, viewer, owner])
        assert.ok(ids.includes(r.uid), `${r.name} listed`);
      assert.ok(withBuiltIn.rows.every((r) => r.builtIn || r.uid.startsWith(`${org.uid}/`)));
      assert.equal(withBuiltIn.total, BigInt(withBuiltIn.rows.length));

      const childrenPlusBuiltIn = await store.roles.list(
        { uidp: { childrenOf: org.uid }, includeBuiltIn: true, name: "viewer" },
        firstPage(),
      );
      const names = childrenPlusBuiltIn.rows.map((r) => r.name);
      assert.ok(names.every((n) => n === "viewer"));
      assert.ok(sortedUids(childrenPlusBuiltIn.rows).includes(viewer.uid));
      assert.ok(sortedUids(childrenPlusBuiltIn.rows).includes(custom.uid));
      assert.ok(!sortedUids(childrenPlusBuiltIn.rows).includes(owner.uid));

      const nothingScoped = await store.roles.list(
        { within: { all: false, uids: [] }, includeBuiltIn: true },
        firstPage(),
      );
      assert.ok(nothingScoped.rows.length >= 2 && nothingScoped.rows.every((r) => r.builtIn));
    });
  });
}
