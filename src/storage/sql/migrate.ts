import { type Kysely, type Migration, sql, type Transaction } from "kysely";
import type { DialectName } from "./dialect.js";
import { migrationsFor } from "./migrations/migrations.js";
import { SchemaNewerError } from "./schema-newer-error.js";

/** Where applied migrations are recorded (one row per migration: `name`, `timestamp`). */
export const MIGRATION_TABLE = "wharf_migration";

/**
 * The PostgreSQL advisory lock key migrations hold (Kysely's Migrator's key, so a replica of an
 * older wharf, which migrated through Kysely, waits for this one during a rolling upgrade).
 */
const POSTGRES_MIGRATION_LOCK = sql.raw("3853314791062309107");

/**
 * How long a SQLite migrator waits for the file's write lock (ms): other processes may be applying
 * migrations, which can take longer than an ordinary write's busy timeout.
 */
const SQLITE_MIGRATION_BUSY_TIMEOUT_MS = 120_000;

/**
 * Applies every pending migration, in name order, in ONE transaction, and resolves to the names
 * applied (empty when none was pending). All or nothing: a failing migration rolls them all back
 * and rejects naming it. Concurrent callers, in any process, serialize: on PostgreSQL the
 * transaction first takes an advisory lock (released at its end); on SQLite it is `BEGIN IMMEDIATE`,
 * which holds the file's write lock (others wait up to the busy timeout). So the second caller sees
 * the first one's rows and applies nothing; a database with nothing pending is answered by a read
 * alone, without the lock. Rejects with {@link SchemaNewerError}, changing nothing,
 * when the database records a migration this build does not have. Migrations numbered below applied
 * ones (developed side by side, merged late) are applied as usual: each depends only on lower ones.
 */
export async function migrateToLatest<DB>(db: Kysely<DB>, dialect: DialectName): Promise<string[]> {
  // Most starts find nothing to do: a read answers that without the write lock, which on SQLite
  // would make handles of one thread opened together wait for each other in the busy handler
  // (a sleep that also stops the holder's event loop). The transaction reads again under its lock.
  if ((await pendingMigrations(db, dialect)).length === 0) return [];
  if (dialect === "postgres") return migrateInTransaction(db, dialect);
  // SQLite: one connection, so the pragma applies to the BEGIN IMMEDIATE that follows.
  const { rows } = await sql<{ timeout: number | bigint }>`pragma busy_timeout`.execute(db);
  const previous = Number(rows[0]?.timeout ?? 0);
  await sql.raw(`pragma busy_timeout = ${SQLITE_MIGRATION_BUSY_TIMEOUT_MS}`).execute(db);
  try {
    return await migrateInTransaction(db, dialect);
  } finally {
    await sql.raw(`pragma busy_timeout = ${previous}`).execute(db);
  }
}

async function migrateInTransaction<DB>(db: Kysely<DB>, dialect: DialectName): Promise<string[]> {
  const known = migrationsFor(dialect);
  return db.transaction().execute(async (trx) => {
    if (dialect === "postgres")
      await sql`select pg_advisory_xact_lock(${POSTGRES_MIGRATION_LOCK})`.execute(trx);
    await sql`create table if not exists ${sql.table(MIGRATION_TABLE)} (
      name varchar(255) not null primary key,
      timestamp varchar(255) not null
    )`.execute(trx);
    const pending = pendingOf(known, await appliedIn(trx));
    for (const name of pending) {
      try {
        await (known[name] as Migration).up(trx as unknown as Kysely<unknown>);
      } catch (err) {
        throw new Error(`migration ${name} failed: ${err instanceof Error ? err.message : String(err)}`, {
          cause: err,
        });
      }
      await sql`insert into ${sql.table(MIGRATION_TABLE)} (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(
        trx,
      );
    }
    return pending;
  });
}

/**
 * The migrations `db` still needs, in the order {@link migrateToLatest} applies them, read without
 * writing anything (a database without the migration table needs them all). Rejects with
 * {@link SchemaNewerError} when the database records a migration this build does not have.
 */
export async function pendingMigrations<DB>(db: Kysely<DB>, dialect: DialectName): Promise<string[]> {
  const hasTable = (await db.introspection.getTables({ withInternalKyselyTables: true })).some(
    (t) => t.name === MIGRATION_TABLE,
  );
  return pendingOf(migrationsFor(dialect), hasTable ? await appliedIn(db) : []);
}

/** Every known migration's name, in application order. */
export function knownMigrations(dialect: DialectName): string[] {
  return Object.keys(migrationsFor(dialect)).sort();
}

async function appliedIn<DB>(db: Kysely<DB> | Transaction<DB>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(MIGRATION_TABLE)}`.execute(db);
  return rows.map((r) => r.name);
}

function pendingOf(known: Record<string, Migration>, applied: string[]): string[] {
  const names = Object.keys(known).sort();
  const unknown = applied.filter((name) => !(name in known)).sort();
  if (unknown.length > 0) throw new SchemaNewerError(unknown, names.at(-1) ?? "none");
  const done = new Set(applied);
  return names.filter((name) => !done.has(name));
}
