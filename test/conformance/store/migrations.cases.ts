import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Worker } from "node:worker_threads";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { newRootUid } from "../../../src/core/uidp.js";
import { pendingDatabaseMigrations } from "../../../src/storage/sql/database-migrations.js";
import { MIGRATION_TABLE } from "../../../src/storage/sql/migrate.js";
import { migrationsFor } from "../../../src/storage/sql/migrations/migrations.js";
import { type OpenStoreOptions, openStore } from "../../../src/storage/sql/open-store.js";
import { SchemaNewerError } from "../../../src/storage/sql/schema-newer-error.js";
import type { TestDatabase } from "../../support/databases.js";
import { childUid, groupRow } from "./fixtures.js";
import { connectTo, migrateUpTo } from "./older-schema.js";

/** The names recorded in the migration table of the database behind `options`. */
async function appliedMigrations(options: OpenStoreOptions): Promise<string[]> {
  const query = `select name from ${MIGRATION_TABLE} order by name`;
  if (options.databaseUrl) {
    const client = new pg.Client({ connectionString: options.databaseUrl });
    await client.connect();
    try {
      return (await client.query<{ name: string }>(query)).rows.map((r) => r.name);
    } finally {
      await client.end();
    }
  }
  const sqlite = new BetterSqlite3(options.sqlitePath ?? "", { readonly: true });
  try {
    return (sqlite.prepare(query).all() as { name: string }[]).map((r) => r.name);
  } finally {
    sqlite.close();
  }
}

/** Runs `statement` directly on the database behind `options`. */
async function runStatement(options: OpenStoreOptions, statement: string): Promise<void> {
  if (options.databaseUrl) {
    const client = new pg.Client({ connectionString: options.databaseUrl });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
    return;
  }
  const sqlite = new BetterSqlite3(options.sqlitePath ?? "");
  try {
    sqlite.exec(statement);
  } finally {
    sqlite.close();
  }
}

const RACER = new URL("../../support/migration-racer.ts", import.meta.url);

/**
 * Runs migrateToLatest on `options` from `count` threads at the same instant, each with a
 * connection of its own (as separate processes have); resolves to what each reported.
 */
async function raceMigrations(
  options: OpenStoreOptions,
  count: number,
): Promise<{ applied?: string[]; error?: string }[]> {
  const barrier = new SharedArrayBuffer(4);
  return Promise.all(
    Array.from({ length: count }, () => {
      const worker = new Worker(RACER, { workerData: { options, barrier, racers: count } });
      return new Promise<{ applied?: string[]; error?: string }>((resolve, reject) => {
        worker.once("message", resolve);
        worker.once("error", reject);
      });
    }),
  );
}

/** Migrations: applied once, idempotent on reopen, safe for concurrent openers in several processes. */
export function migrationCases(db: TestDatabase): void {
  describe("migrations", () => {
    it("records every migration once, and reopening the same database keeps data and applies nothing twice", async () => {
      const first = await db.open();
      const org = groupRow("", "survives-reopen");
      await first.groups.insert(org);
      const second = await db.open();
      assert.deepEqual(await second.groups.get(org.uid), org);
      const third = await db.open();
      assert.equal((await third.groups.getByName("", "survives-reopen"))?.uid, org.uid);
      assert.equal(first.dialect, db.engine);
      assert.deepEqual(
        await appliedMigrations(await db.options()),
        Object.keys(migrationsFor(db.engine)).sort(),
      );
    });

    it("applies a migration numbered below ones already applied (0003 after 0004–0006)", async () => {
      const options = await db.emptyOptions();
      await db.open(options);
      // A database migrated by a build that had 0004–0006 but not yet 0003.
      await runStatement(options, "drop index repos_list_uid_idx");
      await runStatement(options, `delete from ${MIGRATION_TABLE} where name = '0003-repo-list-index'`);
      assert.ok(!(await appliedMigrations(options)).includes("0003-repo-list-index"), "0003 removed");
      await db.open(options);
      assert.deepEqual(await appliedMigrations(options), Object.keys(migrationsFor(db.engine)).sort());
    });

    it("0008 turns 0007's delivery rows into cursors and dead letters", async () => {
      const options = await db.emptyOptions();
      const kysely = connectTo(options);
      try {
        await migrateUpTo(kysely, db.engine, "0007-events");
      } finally {
        await kysely.destroy();
      }
      const org = newRootUid();
      const behind = childUid(org, "000000000000000a"); // owes events 2 and 3, gave up on 1
      const caughtUp = childUid(org, "000000000000000b"); // owes nothing
      await runStatement(
        options,
        `insert into subscriptions (uid, parent_uid, sink, create_time, update_time) values
           ('${behind}', '${org}', 'https://a.example/', 1, 1), ('${caughtUp}', '${org}', 'https://b.example/', 1, 1);
         insert into events (seq, id, type, source, subject, group_uid, time, extensions, data) values
           (1, 'e1', 't', 's', 'one', '${org}', 1, '{}', '{}'),
           (2, 'e2', 't', 's', 'two', '${org}', 2, '{}', '{}'),
           (3, 'e3', 't', 's', 'three', '${org}', 3, '{}', '{}');
         insert into event_deliveries
           (subscription_uid, event_seq, state, attempts, last_attempt_time, last_status, last_error) values
           ('${behind}', 1, 'failed', 20, 9, 410, 'gone'),
           ('${behind}', 2, 'pending', 3, 7, 503, 'unavailable'),
           ('${behind}', 3, 'pending', 0, 0, 0, '');`,
      );
      // The explicit seqs above bypass PostgreSQL's sequence; appends would draw them again.
      if (options.databaseUrl) await runStatement(options, "select setval('events_seq_seq', 3)");

      const store = await db.open(options);
      assert.deepEqual(
        (await store.events.pending(behind, 10)).map((p) => [p.event.subject, p.attempts]),
        [
          ["two", 3],
          ["three", 0],
        ],
        "the pending deliveries, the first with its attempts",
      );
      assert.deepEqual(
        (await store.events.deliveries({ subscriptionUid: behind, state: "failed", limit: 10 })).map((r) => [
          r.event.subject,
          r.attempts,
          r.lastStatus,
          r.lastError,
          r.lastAttemptTime,
        ]),
        [["one", 20, 410, "gone", 9]],
        "the failed delivery is a dead letter",
      );
      assert.deepEqual(
        (await store.events.deliveries({ subscriptionUid: behind, state: "pending", limit: 10 }))[0]
          ?.lastError,
        "unavailable",
        "the first pending one keeps its last error",
      );
      assert.deepEqual(
        await store.events.pending(caughtUp, 10),
        [],
        "a subscription that owed nothing still does",
      );
      assert.equal(await store.events.prune(), 0, "every event is still owed or dead-lettered");
      await store.events.append({
        id: "e4",
        type: "t",
        source: "s",
        subject: "four",
        groupUid: org,
        time: 4,
        extensions: {},
        data: "{}",
      });
      assert.deepEqual(
        (await store.events.pending(caughtUp, 10)).map((p) => p.event.subject),
        ["four"],
        "new events reach both",
      );
      assert.equal((await store.events.pending(behind, 10)).length, 3, "behind owes three now");
    });

    it("0020 starts existing subscriptions at their cursor and keeps their dead letters and backlog", async () => {
      const options = await db.emptyOptions();
      const kysely = connectTo(options);
      try {
        await migrateUpTo(kysely, db.engine, "0015-dispatcher-owners");
      } finally {
        await kysely.destroy();
      }
      const org = newRootUid();
      const sub = childUid(org, "000000000000000c"); // delivered 2, gave up on 1, owes 3
      await runStatement(
        options,
        `insert into subscriptions (uid, parent_uid, sink, cursor_seq, create_time, update_time) values
           ('${sub}', '${org}', 'https://a.example/', 2, 1, 1);
         insert into events (seq, id, type, source, subject, group_uid, time, extensions, data) values
           (1, 'e1', 't', 's', 'one', '${org}', 1, '{}', '{}'),
           (3, 'e3', 't', 's', 'three', '${org}', 3, '{}', '{}');
         insert into event_dead_letters
           (subscription_uid, event_seq, attempts, last_attempt_time, last_status, last_error) values
           ('${sub}', 1, 20, 9, 410, 'gone');`,
      );
      if (options.databaseUrl) await runStatement(options, "select setval('events_seq_seq', 3)");

      const store = await db.open(options);
      const uids = async (state: "pending" | "failed" | "delivered") =>
        (await store.events.deliveries({ subscriptionUid: sub, state, limit: 10 })).map((r) => r.uid);
      assert.deepEqual(await uids("failed"), [`${sub}/0000000000000001`], "the dead letter, with its uid");
      assert.deepEqual(await uids("pending"), [`${sub}/0000000000000003`], "the owed event");
      assert.deepEqual(await uids("delivered"), [], "nothing before the migration reads as delivered");
      assert.deepEqual(
        await store.subscriptions.status(sub),
        { pending: 1, failed: 1, retryTime: 0 },
        "the status is unchanged",
      );
    });

    it("lists pending migrations without writing, and refuses a newer schema changing nothing", async () => {
      const options = await db.emptyOptions();
      const known = Object.keys(migrationsFor(db.engine)).sort();
      assert.deepEqual(await pendingDatabaseMigrations(options), known, "an empty database needs them all");
      await (await openStore(options)).close();
      assert.deepEqual(await pendingDatabaseMigrations(options), []);
      const newest = known.at(-1);
      await runStatement(options, `delete from ${MIGRATION_TABLE} where name = '${newest}'`);
      assert.deepEqual(await pendingDatabaseMigrations(options), [newest], "read, not applied");
      assert.ok(!(await appliedMigrations(options)).includes(newest ?? ""));
      await runStatement(
        options,
        `insert into ${MIGRATION_TABLE} (name, timestamp) values ('0099-future', '2030-01-01T00:00:00.000Z')`,
      );
      const before = await appliedMigrations(options);
      const newer = (err: unknown) =>
        err instanceof SchemaNewerError &&
        err.message ===
          `the database schema is newer than this wharf (applied: 0099-future; newest known: ${newest}); upgrade wharf or point it at another database`;
      await assert.rejects(openStore(options), newer);
      await assert.rejects(pendingDatabaseMigrations(options), newer);
      assert.deepEqual(await appliedMigrations(options), before, "the pending one was not applied either");
    });

    it("four connections of their own migrating a new database at the same instant all succeed, each migration applied by one", async () => {
      const options = await db.emptyOptions();
      const results = await raceMigrations(options, 4);
      assert.deepEqual(
        results.map((r) => r.error),
        [undefined, undefined, undefined, undefined],
        "no racer failed",
      );
      const known = Object.keys(migrationsFor(db.engine)).sort();
      assert.deepEqual(
        results.flatMap((r) => r.applied ?? []).sort(),
        known,
        "each applied once, by one racer",
      );
      assert.deepEqual(await appliedMigrations(options), known);
    });

    it("concurrent openers of a new database all succeed (PostgreSQL: several processes)", async (t) => {
      if (db.engine === "sqlite") {
        t.skip(
          "same-process SQLite openers without a shared write lock block each other's event loop; the racing threads above cover SQLite",
        );
        return;
      }
      const options = await db.emptyOptions();
      const racers = await Promise.all([
        db.open(options),
        db.open(options),
        db.open(options),
        db.open(options),
      ]);
      for (const s of racers) assert.equal(await s.settings.putIfAbsent("opened", "yes"), "yes");
      assert.deepEqual(await appliedMigrations(options), Object.keys(migrationsFor("postgres")).sort());
    });
  });
}
