import assert from "node:assert/strict";
import { it } from "node:test";
import { sql } from "kysely";
import type { ChangeBatch, ChangeFeed } from "../../../src/storage/change-feed.js";
import { connectPostgres } from "../../../src/storage/sql/connect-postgres.js";
import { CHANGE_LISTENER_NAME } from "../../../src/storage/sql/postgres-change-feed.js";
import type { Store } from "../../../src/storage/store.js";
import { forEachEngine } from "../../support/databases.js";
import { firstPage, groupRow, T0 } from "./fixtures.js";

/** Everything `feed` publishes from now on, in order. */
function record(feed: ChangeFeed): { batches: ChangeBatch[]; stop: () => void } {
  const batches: ChangeBatch[] = [];
  const stop = feed.subscribe((batch) => batches.push(batch));
  return { batches, stop };
}

/** Resolves with the first batch from now on that satisfies `wanted`; fails after 5 s. */
function nextBatch(feed: ChangeFeed, wanted: (batch: ChangeBatch) => boolean): Promise<ChangeBatch> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error("no such batch within 5 s"));
    }, 5000);
    const stop = feed.subscribe((batch) => {
      if (!wanted(batch)) return;
      clearTimeout(timer);
      stop();
      resolve(batch);
    });
  });
}

const revocation = () => ({ issuedBefore: T0, createTime: T0, expireTime: Date.now() + 3600_000 });
const writes = (table: string) => (batch: ChangeBatch) => batch.tables.includes(table);

forEachEngine("change feed: this process's own writes", (db) => {
  it("publishes a write outside a transaction at once, a transaction's writes at its commit, a rollback never", async () => {
    const store = await db.open();
    const seen = record(store.changes);
    await store.tokenRevocations.insert(revocation());
    assert.deepEqual(seen.batches, [{ tables: ["token_revocations"], everything: false }]);

    seen.batches.length = 0;
    await store.transaction(async (tx) => {
      await tx.tokenRevocations.insert(revocation());
      await tx.groups.insert(groupRow("", "in-a-transaction"));
      assert.deepEqual(seen.batches, [], "nothing before the commit");
    });
    assert.equal(seen.batches.length, 1, "one batch for the transaction");
    assert.deepEqual([...(seen.batches[0]?.tables ?? [])].sort(), ["groups", "token_revocations"]);

    seen.batches.length = 0;
    await assert.rejects(
      store.transaction(async (tx) => {
        await tx.tokenRevocations.insert(revocation());
        throw new Error("roll back");
      }),
      /roll back/,
    );
    assert.deepEqual(seen.batches, [], "a rolled-back transaction changed nothing");
    seen.stop();
  });
});

forEachEngine(
  "change feed: another process's writes (LISTEN/NOTIFY)",
  (db) => {
    let writer: Store;
    let reader: Store;
    /** Opens the writer, and a reader that listens with list totals kept an hour. */
    const open = async () => {
      const options = await db.options();
      writer = await db.open(options);
      reader = await db.open({ ...options, listenForChanges: true, listCountTtlMs: 3600_000 });
      return options;
    };

    it("delivers committed writes to the other store once, not rolled-back ones; its list totals follow", async () => {
      await open();
      const org = groupRow("", "feed-org");
      const inserted = nextBatch(reader.changes, writes("groups"));
      await writer.groups.insert(org);
      const count = async () =>
        (await reader.groups.list({ uidp: { descendantsOf: org.uid } }, firstPage())).total;
      await inserted;
      assert.equal(await count(), 1n, "counted (and cached for an hour) by the reader");

      const arrived = nextBatch(reader.changes, writes("groups"));
      await writer.transaction(async (tx) => {
        await tx.groups.insert(groupRow(org.uid, "child"));
      });
      assert.deepEqual(await arrived, { tables: ["groups"], everything: false });
      assert.equal(await count(), 2n, "the cached total was dropped by the writer's notification");

      const seen = record(reader.changes);
      await assert.rejects(
        writer.transaction(async (tx) => {
          await tx.tokenRevocations.insert(revocation());
          throw new Error("roll back");
        }),
      );
      // A later committed write marks the end: everything before it has been delivered by then.
      const marked = nextBatch(reader.changes, writes("signing_keys"));
      await writer.signingKeys.insert({ kid: "marker", privateJwk: "{}", publicJwk: "{}", createTime: T0 });
      await marked;
      assert.deepEqual(
        seen.batches,
        [{ tables: ["signing_keys"], everything: false }],
        "no rolled-back batch",
      );

      // The reader's own write: published once, locally at commit, not again from its NOTIFY.
      seen.batches.length = 0;
      await reader.tokenRevocations.insert(revocation());
      const marked2 = nextBatch(reader.changes, writes("signing_keys"));
      await writer.signingKeys.insert({ kid: "marker-2", privateJwk: "{}", publicJwk: "{}", createTime: T0 });
      await marked2;
      assert.deepEqual(
        seen.batches.map((b) => b.tables),
        [["token_revocations"], ["signing_keys"]],
      );
      seen.stop();
    });

    it("after its connection is cut, reconnects, publishes everything, then delivers again", async () => {
      const options = await open();
      const resynced = nextBatch(reader.changes, (batch) => batch.everything);
      const admin = connectPostgres(options.databaseUrl as string);
      try {
        const cut = await sql<{ cut: boolean }>`
          select pg_terminate_backend(pid) as cut from pg_stat_activity
          where application_name = ${CHANGE_LISTENER_NAME} and datname = current_database()`.execute(admin);
        assert.ok(cut.rows.length >= 1 && cut.rows.every((r) => r.cut), "the listening connections were cut");
      } finally {
        await admin.destroy();
      }
      await resynced;
      const arrived = nextBatch(reader.changes, writes("token_revocations"));
      await writer.tokenRevocations.insert(revocation());
      await arrived;
    });
  },
  ["postgres"],
);
