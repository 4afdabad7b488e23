import assert from "node:assert/strict";
import { describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import type { TestDatabase } from "../../../../test/support/databases.js";
import { MIGRATION_TABLE } from "../migrate.js";
import { migrationsFor } from "../migrations/migrations.js";
import type { OpenStoreOptions } from "../open-store.js";
import { groupRow } from "./fixtures.js";

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

/** Migrations: applied once, idempotent on reopen, safe for concurrent openers on PostgreSQL. */
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
      const options = await db.freshOptions();
      await db.open(options);
      // A database migrated by a build that had 0004–0006 but not yet 0003.
      await runStatement(options, "drop index repos_list_uid_idx");
      await runStatement(options, `delete from ${MIGRATION_TABLE} where name = '0003-repo-list-index'`);
      assert.ok(!(await appliedMigrations(options)).includes("0003-repo-list-index"), "0003 removed");
      await db.open(options);
      assert.deepEqual(await appliedMigrations(options), Object.keys(migrationsFor(db.engine)).sort());
    });

    it("concurrent openers of a new database all succeed (PostgreSQL: several processes)", async (t) => {
      if (db.engine === "sqlite") {
        t.skip("SQLite serves one process; same-process openers would wait on each other's lock");
        return;
      }
      const options = await db.freshOptions();
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
