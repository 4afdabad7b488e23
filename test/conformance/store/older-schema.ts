import assert from "node:assert/strict";
import { type Kysely, Migrator } from "kysely";
import { connectPostgres } from "../../../src/storage/sql/connect-postgres.js";
import { connectSqlite } from "../../../src/storage/sql/connect-sqlite.js";
import type { DialectName } from "../../../src/storage/sql/dialect.js";
import { MIGRATION_TABLE } from "../../../src/storage/sql/migrate.js";
import { migrationProvider } from "../../../src/storage/sql/migrations/migrations.js";
import type { OpenStoreOptions } from "../../../src/storage/sql/open-store.js";
import type { Database } from "../../../src/storage/sql/schema.js";

/** A raw Kysely connection to the database `options` names (its PostgreSQL URL, else its SQLite file). */
export function connectTo(options: OpenStoreOptions): Kysely<Database> {
  return options.databaseUrl ? connectPostgres(options.databaseUrl) : connectSqlite(options.sqlitePath ?? "");
}

/**
 * Applies the migrations up to and including `name` through `kysely`, as a build that had no
 * later ones would have (the migration tests then write data of that schema and open the store);
 * asserts that it worked.
 */
export async function migrateUpTo(
  kysely: Kysely<Database>,
  engine: DialectName,
  name: string,
): Promise<void> {
  const migrator = new Migrator({
    db: kysely,
    provider: migrationProvider(engine),
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: `${MIGRATION_TABLE}_lock`,
    allowUnorderedMigrations: true,
  });
  const { error } = await migrator.migrateTo(name);
  assert.equal(error, undefined, `migrated up to ${name}`);
}
