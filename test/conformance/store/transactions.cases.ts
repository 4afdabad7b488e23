import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { assertAlreadyExists, groupRow, repoRow } from "./fixtures.js";

/**
 * Store.transaction: commit, rollback on throw, nested calls joining, constraint errors inside, and
 * a signal that rolls it back.
 */
export function transactionCases(db: TestDatabase): void {
  describe("transactions", () => {
    let store: Store;
    before(async () => {
      store = await db.openFresh();
    });

    it("commits every write when fn resolves, and returns its value", async () => {
      const org = groupRow("", "tx-commit");
      const result = await store.transaction(async (tx) => {
        await tx.groups.insert(org);
        await tx.repos.insert(repoRow(org.uid, "app"));
        assert.equal((await tx.groups.get(org.uid))?.name, "tx-commit", "visible inside");
        return 42;
      });
      assert.equal(result, 42);
      assert.equal((await store.groups.get(org.uid))?.name, "tx-commit");
      assert.equal((await store.repos.getByName(org.uid, "app"))?.name, "app");
    });

    it("rolls back every write when fn throws, and rethrows the same error", async () => {
      const org = groupRow("", "tx-rollback");
      const boom = new Error("boom");
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.groups.insert(org);
          await tx.repos.insert(repoRow(org.uid, "app"));
          await tx.settings.putIfAbsent("tx-rollback", "x");
          throw boom;
        }),
        (err) => err === boom,
      );
      assert.equal(await store.groups.get(org.uid), undefined);
      assert.equal(await store.repos.getByName(org.uid, "app"), undefined);
      assert.equal(await store.settings.get("tx-rollback"), undefined);
    });

    it("rolls back earlier writes when a later write violates a constraint", async () => {
      const org = groupRow("", "tx-unique");
      await store.groups.insert(org);
      const fresh = groupRow("", "tx-unique-fresh");
      await assertAlreadyExists(
        store.transaction(async (tx) => {
          await tx.groups.insert(fresh);
          await tx.groups.insert(groupRow("", "tx-unique"));
        }),
      );
      assert.equal(await store.groups.get(fresh.uid), undefined);
    });

    it("rolls back the tag row when a put fails inside an outer transaction", async () => {
      const org = groupRow("", "tx-tags");
      await store.groups.insert(org);
      const repo = repoRow(org.uid, "app");
      await store.repos.insert(repo);
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.tags.put({
            repoUid: repo.uid,
            name: "latest",
            digest: "sha256:1",
            deprecated: false,
            newUid: `${repo.uid}/0000000000000001`,
            now: 1,
          });
          throw new Error("after the put");
        }),
      );
      assert.equal(await store.tags.getByName(repo.uid, "latest"), undefined);
      assert.deepEqual(await store.tags.history({ repoUid: repo.uid, tagName: "latest", limit: 10 }), []);
    });

    it("nested calls join the outer transaction", async () => {
      const outer = groupRow("", "tx-outer");
      const inner = groupRow("", "tx-inner");
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.groups.insert(outer);
          const seen = await tx.transaction(async (nested) => {
            await nested.groups.insert(inner);
            return nested.groups.get(outer.uid);
          });
          assert.equal(seen?.uid, outer.uid, "the nested call sees the outer's writes");
          throw new Error("outer fails after the nested call returned");
        }),
        /outer fails/,
      );
      assert.equal(await store.groups.get(outer.uid), undefined);
      assert.equal(
        await store.groups.get(inner.uid),
        undefined,
        "the nested write rolled back with the outer",
      );

      await store.transaction((tx) => tx.transaction((nested) => nested.groups.insert(inner)));
      assert.equal((await store.groups.get(inner.uid))?.name, "tx-inner");
    });

    it("a signal that fired before the call: fn never runs and the call rejects with its reason", async () => {
      const gone = new Error("gone before");
      const controller = new AbortController();
      controller.abort(gone);
      let ran = false;
      await assert.rejects(
        store.transaction(async () => {
          ran = true;
        }, controller.signal),
        (err) => err === gone,
      );
      assert.equal(ran, false, "fn did not run");
    });

    it("a signal that fires during fn: the next statement's end rolls back every write, with its reason", async () => {
      const org = groupRow("", "tx-signal-mid");
      const controller = new AbortController();
      const late = new Error("deadline passed");
      let after = 0;
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.groups.insert(org);
          controller.abort(late);
          await tx.repos.insert(repoRow(org.uid, "app"));
          after++;
        }, controller.signal),
        (err) => err === late,
      );
      assert.equal(after, 0, "the statement that ended after the signal threw");
      assert.equal(await store.groups.get(org.uid), undefined, "the write before the signal rolled back");
      assert.equal(await store.repos.getByName(org.uid, "app"), undefined);
    });

    it("a signal that fires after the last statement: the transaction rolls back instead of committing", async () => {
      const org = groupRow("", "tx-signal-end");
      const controller = new AbortController();
      const late = new Error("client went away");
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.groups.insert(org);
          await new Promise((resolve) => setTimeout(resolve, 5));
          controller.abort(late);
          return "done";
        }, controller.signal),
        (err) => err === late,
      );
      assert.equal(await store.groups.get(org.uid), undefined);
    });

    it("a signal that never fires changes nothing; a nested call checks its own signal on entry", async () => {
      const org = groupRow("", "tx-signal-quiet");
      const quiet = new AbortController();
      assert.equal(await store.transaction((tx) => tx.groups.insert(org).then(() => 7), quiet.signal), 7);
      assert.equal((await store.groups.get(org.uid))?.name, "tx-signal-quiet");
      const inner = groupRow("", "tx-signal-inner");
      const fired = new AbortController();
      fired.abort(new Error("inner gone"));
      await assert.rejects(
        store.transaction((tx) => tx.transaction((nested) => nested.groups.insert(inner), fired.signal)),
        /inner gone/,
      );
      assert.equal(await store.groups.get(inner.uid), undefined);
    });

    it("a transaction handle cannot close the database", async () => {
      await store.transaction(async (tx) => {
        await assert.rejects(tx.close());
      });
      assert.equal(await store.groups.get(groupRow("", "x").uid), undefined, "the store still works");
    });
  });
}
