import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { newChildUid } from "../../../src/core/uidp.js";
import type { Store } from "../../../src/storage/store.js";
import type { UpstreamRow } from "../../../src/storage/upstream-store.js";
import type { TestDatabase } from "../../support/databases.js";
import { assertAlreadyExists, firstPage, groupRow, sortedUids, T0 } from "./fixtures.js";

function upstreamRow(orgUid: string, name: string, time = T0): UpstreamRow {
  return {
    uid: newChildUid(orgUid),
    orgUid,
    name,
    url: `https://${name}.example`,
    username: "",
    passwordSealed: "",
    tagTtlMs: 600_000,
    createTime: time,
    updateTime: time,
  };
}

/**
 * UpstreamStore (migration 0021): rows round-trip, names are unique per organization, lists by
 * subtree and name, the directory's joined read, and upstreams going with their organization.
 */
export function upstreamCases(db: TestDatabase): void {
  describe("upstreams", () => {
    let store: Store;
    let org: string;
    let other: string;

    before(async () => {
      store = await db.openFresh();
      const o = groupRow("", "up-org");
      await store.groups.insert(o);
      org = o.uid;
      const p = groupRow("", "up-other");
      await store.groups.insert(p);
      other = p.uid;
    });

    it("stores, reads, updates and deletes an upstream; name and organization never change", async () => {
      const row: UpstreamRow = {
        ...upstreamRow(org, "hub"),
        username: "robot",
        passwordSealed: "v1:aaaa:bbbb",
        tagTtlMs: 90_000,
      };
      await store.upstreams.insert(row);
      assert.deepEqual(await store.upstreams.get(row.uid), row);
      assert.deepEqual(await store.upstreams.getByName(org, "hub"), row);
      assert.equal(await store.upstreams.getByName(other, "hub"), undefined);
      const next: UpstreamRow = {
        ...row,
        name: "renamed",
        url: "https://other.example/prefix",
        username: "",
        passwordSealed: "",
        tagTtlMs: 1000,
        updateTime: T0 + 5,
      };
      assert.equal(await store.upstreams.update(next), true);
      assert.deepEqual(await store.upstreams.get(row.uid), { ...next, name: "hub" });
      assert.equal(await store.upstreams.update(upstreamRow(org, "missing")), false);
      assert.equal(await store.upstreams.delete(row.uid), true);
      assert.equal(await store.upstreams.get(row.uid), undefined);
      assert.equal(await store.upstreams.delete(row.uid), false);
    });

    it("refuses a second upstream of the same name in one organization as ALREADY_EXISTS", async () => {
      await store.upstreams.insert(upstreamRow(org, "dup"));
      await assertAlreadyExists(store.upstreams.insert(upstreamRow(org, "dup")));
      await store.upstreams.insert(upstreamRow(other, "dup"));
    });

    it("lists by subtree, authorized scopes and name; all() joins the organization's name", async () => {
      const fresh = await db.openFresh();
      const a = groupRow("", "list-a");
      const b = groupRow("", "list-b");
      await fresh.groups.insert(a);
      await fresh.groups.insert(b);
      const a1 = upstreamRow(a.uid, "zeta", T0 + 1);
      const a2 = upstreamRow(a.uid, "alpha", T0 + 2);
      const b1 = upstreamRow(b.uid, "mid", T0 + 3);
      for (const row of [a1, a2, b1]) await fresh.upstreams.insert(row);

      const ofA = await fresh.upstreams.list({ uidp: { childrenOf: a.uid } }, firstPage());
      assert.deepEqual(sortedUids(ofA.rows), sortedUids([a1, a2]));
      assert.equal(ofA.total, 2n);
      const byName = await fresh.upstreams.list({}, firstPage(100, "name"));
      assert.deepEqual(
        byName.rows.map((r) => r.name),
        ["alpha", "mid", "zeta"],
      );
      const withinB = await fresh.upstreams.list({ within: { all: false, uids: [b.uid] } }, firstPage());
      assert.deepEqual(sortedUids(withinB.rows), [b1.uid]);
      const none = await fresh.upstreams.list({ within: { all: false, uids: [] } }, firstPage());
      assert.deepEqual(none.rows, []);

      const all = await fresh.upstreams.all();
      assert.deepEqual(all.map((r) => `${r.orgName}/${r.name}`).sort(), [
        "list-a/alpha",
        "list-a/zeta",
        "list-b/mid",
      ]);
      assert.deepEqual(
        all.find((r) => r.uid === b1.uid),
        { ...b1, orgName: "list-b" },
      );
    });

    it("deletes an organization's upstreams with it", async () => {
      const lone = groupRow("", "up-lone");
      await store.groups.insert(lone);
      const row = upstreamRow(lone.uid, "hub");
      await store.upstreams.insert(row);
      assert.equal(await store.groups.delete(lone.uid), true);
      assert.equal(await store.upstreams.get(row.uid), undefined);
      assert.ok(await store.upstreams.getByName(org, "dup"));
    });
  });
}
