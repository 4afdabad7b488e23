import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { AccessScopes } from "../../../src/core/context.js";
import type { UidpFilter } from "../../../src/core/list.js";
import { newChildUid, newRootUid } from "../../../src/core/uidp.js";
import type { GroupRow } from "../../../src/storage/iam-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { childUid, firstPage, groupRow, repoRow } from "./fixtures.js";

/**
 * Every UidpFilter field and `within`, on groups (and repos and tags, which share the predicates).
 *
 * Tree: A ─ b ─ c        B ─ e
 *           └ b2 (the sibling right after b: a naive `uid >= b` range would include it)
 *         └ d
 */
export function hierarchyCases(db: TestDatabase): void {
  describe("hierarchy filters", () => {
    let store: Store;
    let A: GroupRow;
    let b: GroupRow;
    let b2: GroupRow;
    let c: GroupRow;
    let d: GroupRow;
    let B: GroupRow;
    let e: GroupRow;

    const list = async (uidp: UidpFilter | undefined, within?: AccessScopes) => {
      const slice = await store.groups.list(
        { ...(uidp ? { uidp } : {}), ...(within ? { within } : {}) },
        firstPage(),
      );
      assert.equal(slice.total, BigInt(slice.rows.length), "total counts the filtered rows");
      return slice.rows.map((r) => r.uid);
    };
    const uids = (...rows: GroupRow[]) => rows.map((r) => r.uid).sort();

    before(async () => {
      store = await db.openFresh();
      A = groupRow("", "A");
      b = groupRow(A.uid, "b", childUid(A.uid, "1111111111111111"));
      b2 = groupRow(A.uid, "b2", childUid(A.uid, "1111111111111112"));
      c = groupRow(b.uid, "c");
      d = groupRow(A.uid, "d", childUid(A.uid, "0000000000000000"));
      B = groupRow("", "B");
      e = groupRow(B.uid, "e");
      for (const g of [A, b, b2, c, d, B, e]) await store.groups.insert(g);
    });

    it("descendantsOf: the uid and all its descendants, nothing beside", async () => {
      assert.deepEqual(await list({ descendantsOf: A.uid }), uids(A, b, b2, c, d));
      assert.deepEqual(await list({ descendantsOf: b.uid }), uids(b, c));
      assert.deepEqual(await list({ descendantsOf: c.uid }), uids(c));
      assert.deepEqual(await list({ descendantsOf: newRootUid() }), []);
    });

    it("childrenOf: direct children only", async () => {
      assert.deepEqual(await list({ childrenOf: A.uid }), uids(b, b2, d));
      assert.deepEqual(await list({ childrenOf: b.uid }), uids(c));
      assert.deepEqual(await list({ childrenOf: c.uid }), []);
    });

    it("inRoot: root-level rows only", async () => {
      assert.deepEqual(await list({ inRoot: true }), uids(A, B));
    });

    it("ancestorsOf: strict ancestors", async () => {
      assert.deepEqual(await list({ ancestorsOf: c.uid }), uids(A, b));
      assert.deepEqual(await list({ ancestorsOf: b.uid }), uids(A));
      assert.deepEqual(await list({ ancestorsOf: A.uid }), []);
    });

    it("ids: exactly those uids that exist", async () => {
      assert.deepEqual(await list({ ids: [b.uid, e.uid, newChildUid(B.uid)] }), uids(b, e));
    });

    it("set fields combine with AND", async () => {
      assert.deepEqual(await list({ descendantsOf: A.uid, childrenOf: b.uid }), uids(c));
      assert.deepEqual(await list({ ids: [A.uid, b.uid, e.uid], inRoot: true }), uids(A));
      assert.deepEqual(await list({ ancestorsOf: c.uid, inRoot: true }), uids(A));
      assert.deepEqual(await list({ descendantsOf: B.uid, childrenOf: A.uid }), []);
    });

    it("treats proto3 defaults (empty strings, empty ids, inRoot false) as unset", async () => {
      const all = uids(A, b, b2, c, d, B, e);
      assert.deepEqual(await list(undefined), all);
      assert.deepEqual(
        await list({ ids: [], descendantsOf: "", childrenOf: "", ancestorsOf: "", inRoot: false }),
        all,
      );
    });

    it("within: all, none, and the union of subtrees", async () => {
      const all = uids(A, b, b2, c, d, B, e);
      assert.deepEqual(await list(undefined, { all: true }), all);
      assert.deepEqual(await list(undefined, { all: false, uids: [] }), []);
      assert.deepEqual(await list(undefined, { all: false, uids: [b.uid] }), uids(b, c));
      assert.deepEqual(await list(undefined, { all: false, uids: [b.uid, B.uid] }), uids(b, c, B, e));
      assert.deepEqual(await list(undefined, { all: false, uids: [d.uid, e.uid] }), uids(d, e));
    });

    it("within combines with uidp", async () => {
      assert.deepEqual(await list({ childrenOf: A.uid }, { all: false, uids: [b.uid, d.uid] }), uids(b, d));
      assert.deepEqual(await list({ inRoot: true }, { all: false, uids: [b.uid] }), []);
    });

    it("applies to repos and tags too", async () => {
      const inB = repoRow(b.uid, "in-b");
      const inC = repoRow(c.uid, "in-c");
      const inB2 = repoRow(b2.uid, "in-b2");
      for (const r of [inB, inC, inB2]) await store.repos.insert(r);
      const repos = await store.repos.list({ uidp: { descendantsOf: b.uid } }, firstPage());
      assert.deepEqual(
        repos.rows.map((r) => r.uid),
        [inB.uid, inC.uid].sort(),
      );
      const scoped = await store.repos.list({ within: { all: false, uids: [b2.uid] } }, firstPage());
      assert.deepEqual(
        scoped.rows.map((r) => r.uid),
        [inB2.uid],
      );

      for (const r of [inB, inC, inB2]) {
        await store.tags.put({
          repoUid: r.uid,
          name: "latest",
          digest: `sha256:${"a".repeat(64)}`,
          deprecated: false,
          newUid: newChildUid(r.uid),
          now: 1,
        });
      }
      const tags = await store.tags.list({ within: { all: false, uids: [c.uid, b2.uid] } }, firstPage());
      assert.deepEqual(tags.rows.map((t) => t.repoUid).sort(), [inC.uid, inB2.uid].sort());
      const children = await store.tags.list({ uidp: { childrenOf: inB.uid } }, firstPage());
      assert.deepEqual(
        children.rows.map((t) => t.repoUid),
        [inB.uid],
      );
    });
  });
}
