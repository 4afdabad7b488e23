import { randomUUID } from "node:crypto";
import { createChangeHub } from "../change-feed.js";
import type { Store } from "../store.js";
import { connectDatabase, type DatabaseOptions, sqliteFile } from "./connect-database.js";
import { createCountCache } from "./count-cache.js";
import { migrateToLatest } from "./migrate.js";
import type { ChangeListener } from "./postgres-change-feed.js";
import { type ChangeSink, rootContext } from "./sql-context.js";
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
  /**
   * PostgreSQL only: also receive the other processes' changes on the store's change feed (a
   * dedicated LISTEN connection; a serving process wants it). Changes made through this store are
   * announced to the others either way. Default false.
   */
  listenForChanges?: boolean;
  /** Receives errors of the change feed (a dropped LISTEN connection, a failed NOTIFY). */
  onChangeFeedError?: (err: unknown) => void;
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
  const counts = createCountCache(options.listCountTtlMs ?? DEFAULT_LIST_COUNT_TTL_MS);
  const onError = options.onChangeFeedError ?? (() => {});
  const hub = createChangeHub(onError);
  const sink: ChangeSink = { hub };
  const notifying = new Set<Promise<void>>();
  let listener: ChangeListener | undefined;
  if (dialect.name === "postgres") {
    const feed = await import("./postgres-change-feed.js");
    const instance = randomUUID();
    sink.beforeCommit = (trx, tables) => feed.notifyChanges(trx, instance, tables);
    sink.afterWrite = (tables) => {
      const sent: Promise<void> = feed
        .notifyChanges(db, instance, tables)
        .catch(onError)
        .finally(() => notifying.delete(sent));
      notifying.add(sent);
    };
    // Other processes' writes: this process's own already invalidated its counts.
    hub.subscribe((batch) => (batch.everything ? counts.invalidateAll() : counts.invalidate(batch.tables)));
    if (options.listenForChanges) {
      try {
        listener = await feed.listenForChanges({
          url: options.databaseUrl as string,
          instance,
          hub,
          onError,
        });
      } catch (err) {
        await checkpointer?.close();
        await db.destroy();
        throw err;
      }
    }
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await listener?.close();
      await Promise.all(notifying);
      await checkpointer?.close();
      await db.destroy();
    })();
    return closing;
  };
  return createSqlStore(rootContext(db, dialect, counts, sink), close);
}
