import { existsSync } from "node:fs";
import BetterSqlite3 from "better-sqlite3";
import { Kysely, SqliteDialect } from "kysely";
import { connectDatabase, type DatabaseOptions } from "./connect-database.js";
import { knownMigrations, migrateToLatest, pendingMigrations } from "./migrate.js";

const INVALID_CATALOG_NAME = "3D000";

/**
 * Applies the pending migrations of the database `options` select (which must exist: see
 * ensurePostgresDatabase; a SQLite file is created) and resolves to their names, in order (empty:
 * nothing was pending). Safe beside servers and other migrators on the same database (see
 * migrateToLatest); rejects with SchemaNewerError, changing nothing, on a newer schema.
 */
export async function migrateDatabase(options: DatabaseOptions): Promise<string[]> {
  const { db, dialect } = await connectDatabase(options);
  try {
    return await migrateToLatest(db, dialect.name);
  } finally {
    await db.destroy();
  }
}

/**
 * The migrations `migrateDatabase` would apply now, in order, found without writing anything: a
 * PostgreSQL database that does not exist, or a SQLite file that does not exist, needs them all and
 * is not created (SQLite is opened read-only). Rejects with SchemaNewerError on a newer schema.
 */
export async function pendingDatabaseMigrations(options: DatabaseOptions): Promise<string[]> {
  if (options.databaseUrl) {
    const { db, dialect } = await connectDatabase(options);
    try {
      return await pendingMigrations(db, dialect.name);
    } catch (err) {
      if ((err as { code?: unknown }).code === INVALID_CATALOG_NAME) return knownMigrations(dialect.name);
      throw err;
    } finally {
      await db.destroy();
    }
  }
  const path = options.sqlitePath ?? "";
  if (path === ":memory:" || !existsSync(path)) return knownMigrations("sqlite");
  const db = new Kysely<unknown>({
    dialect: new SqliteDialect({
      database: new BetterSqlite3(path, { readonly: true, fileMustExist: true }),
    }),
  });
  try {
    return await pendingMigrations(db, "sqlite");
  } finally {
    await db.destroy();
  }
}
