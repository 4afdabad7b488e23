import type { Store } from "../store.js";
import { connectDatabase, type DatabaseOptions, sqliteFile } from "./connect-database.js";
import { createCountCache } from "./count-cache.js";
import { migrateToLatest } from "./migrate.js";
import { rootContext } from "./sql-context.js";
import { createSqlStore } from "./sql-store.js";
import { startWalCheckpointer } from "./wal-checkpointer.js";

/** Where the metadata lives, and how the store caches list totals. */
export interface OpenStoreOptions extends DatabaseOptions {
  /**
   * How long a list's total (COUNT of its filter) may be reused across pages and requests, in ms
   * (default 1000; 0 counts every time). Writes through this store invalidate at once; writes by
   * other processes show in totals within this time.
   */
  listCountTtlMs?: number;
}

/** Default of `OpenStoreOptions.listCountTtlMs`. */
export const DEFAULT_LIST_COUNT_TTL_MS = 1000;

/**
 * Opens the metadata store and applies pending migrations before returning. PostgreSQL when
 * `databaseUrl` is a postgres URL (a pg Pool), else SQLite at `sqlitePath` (WAL, synchronous=NORMAL,
 * foreign keys on, busy_timeout 5000). Safe to call from several processes on one database:
 * migrations serialize. Throws when neither option is usable, for another URL scheme, or when
 * connecting or migrating fails (the connection is closed first). Call `close()` when done.
 *
 * SQLite: give every handle of one process on the same file the same `sqliteWriteLock`, so they
 * await each other's writes. better-sqlite3 is synchronous: handles WITHOUT a shared lock wait in
 * SQLite's busy handler, which blocks the waiting thread's event loop, and on one thread the loop
 * the lock holder needs to finish (SQLITE_BUSY after 5 s). Separate processes wait for each other
 * through SQLite's lock.
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const { db, dialect } = await connectDatabase(options);
  try {
    await migrateToLatest(db, dialect.name);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  const checkpointer =
    sqliteFile(options) && options.walCheckpoints === "own-thread"
      ? startWalCheckpointer(options.sqlitePath as string)
      : undefined;
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await checkpointer?.close();
      await db.destroy();
    })();
    return closing;
  };
  const counts = createCountCache(options.listCountTtlMs ?? DEFAULT_LIST_COUNT_TTL_MS);
  return createSqlStore(rootContext(db, dialect, counts), close);
}
