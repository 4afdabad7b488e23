import { type Kysely, Migrator } from "kysely";
import type { DialectName } from "./dialect.js";
import { migrationProvider } from "./migrations/migrations.js";

/** Where applied migrations are recorded. */
export const MIGRATION_TABLE = "wharf_migration";

/**
 * Applies every pending migration, in order, each in a transaction. Idempotent: applied migrations
 * are skipped. Concurrent callers on PostgreSQL serialize on Kysely's advisory lock; on SQLite on the
 * write lock of `BEGIN IMMEDIATE`. Throws the first migration error (the failed migration is rolled back).
 */
export async function migrateToLatest<DB>(db: Kysely<DB>, dialect: DialectName): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: migrationProvider(dialect),
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: `${MIGRATION_TABLE}_lock`,
    // Migrations developed side by side get numbers in the order they were started, not merged:
    // 0003 landed after 0004–0006, and databases that already ran those still need it. Each
    // migration only depends on ones with lower numbers, so a late lower one is applied as usual.
    allowUnorderedMigrations: true,
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((r) => r.status === "Error")?.migrationName ?? "unknown";
    throw new Error(`migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return (results ?? []).map((r) => r.migrationName);
}
