import type { Kysely } from "kysely";
import { connectSqlite } from "./connect-sqlite.js";
import { postgresDialect, type SqlDialect, sqliteDialect } from "./dialect.js";
import type { Database } from "./schema.js";
import { BACKSTOP_AUTOCHECKPOINT_PAGES, WAL_SIZE_LIMIT_BYTES } from "./wal-checkpointer.js";

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;

/** Where the metadata lives and how to connect to it. */
export interface DatabaseOptions {
  /** A `postgres://` or `postgresql://` URL; when set, PostgreSQL is used and `sqlitePath` ignored. */
  databaseUrl?: string;
  /** The SQLite file used without `databaseUrl` (its directory is created); `:memory:` for a private in-memory database. */
  sqlitePath?: string;
  /**
   * SQLite file only: where WAL checkpoints run. `in-commits` (default): SQLite's autocheckpoint,
   * every ~1,000 pages, in the commit that crosses it. `own-thread`: a worker thread started with
   * this store (startWalCheckpointer), this connection's commits only at the backstop, which a
   * serving process wants. `other-thread`: another store of this process has that thread; commits
   * here only checkpoint at the backstop.
   */
  walCheckpoints?: "in-commits" | "own-thread" | "other-thread";
  /**
   * SQLite only: the memory of the write lock (createSqliteWriteLockMemory) shared by every thread
   * of this process that opens the same file, so they wait for each other's writes without blocking
   * their event loops. Default: a lock of this store's own.
   */
  sqliteWriteLock?: SharedArrayBuffer;
}

/** True when `options` open a SQLite file (not PostgreSQL, not an in-memory database). */
export function sqliteFile(options: DatabaseOptions): boolean {
  return !options.databaseUrl && !!options.sqlitePath && options.sqlitePath !== ":memory:";
}

/**
 * A Kysely connection to the database `options` select, not migrated: a pg Pool for a postgres URL
 * (pg is loaded only then), else the SQLite file (see connectSqlite; WAL checkpoints in commits
 * unless `walCheckpoints` puts them elsewhere). Throws for another URL scheme or when neither
 * option is set. The caller destroys it.
 */
export async function connectDatabase(
  options: DatabaseOptions,
): Promise<{ db: Kysely<Database>; dialect: SqlDialect }> {
  const url = options.databaseUrl;
  if (url !== undefined && url !== "") {
    if (!POSTGRES_URL.test(url)) {
      throw new Error(
        `openStore: unsupported database URL scheme in "${url.split(":")[0]}:…" (want postgres://)`,
      );
    }
    const { connectPostgres } = await import("./connect-postgres.js");
    return { db: connectPostgres(url), dialect: postgresDialect };
  }
  if (options.sqlitePath === undefined || options.sqlitePath === "") {
    throw new Error("openStore: set databaseUrl (postgres://…) or sqlitePath");
  }
  const checkpointsElsewhere =
    sqliteFile(options) && (options.walCheckpoints ?? "in-commits") !== "in-commits";
  const db = connectSqlite(options.sqlitePath, {
    writeLock: options.sqliteWriteLock,
    ...(checkpointsElsewhere
      ? { walAutocheckpointPages: BACKSTOP_AUTOCHECKPOINT_PAGES, walSizeLimitBytes: WAL_SIZE_LIMIT_BYTES }
      : {}),
  });
  return { db, dialect: sqliteDialect };
}
