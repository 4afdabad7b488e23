import { constants } from "node:fs";
import { access, mkdir } from "node:fs/promises";
import { type OpenStoreOptions, openStore } from "../storage/sql/open-store.js";
import { createSqliteWriteLockMemory } from "../storage/sql/sqlite-write-lock.js";
import type { Store } from "../storage/store.js";
import type { WharfConfig } from "./config.js";

/** The SQLite file used when no database URL is configured. */
export function sqlitePathOf(config: WharfConfig): string {
  return `${config.dataDir}/wharf.db`;
}

/** The database the configuration names: its PostgreSQL URL, else the SQLite file in the data dir. */
export function databaseOf(config: WharfConfig): { databaseUrl: string } | { sqlitePath: string } {
  return config.databaseUrl ? { databaseUrl: config.databaseUrl } : { sqlitePath: sqlitePathOf(config) };
}

/**
 * The store options of a serving process's threads: `main` (the serving thread) runs the SQLite
 * WAL checkpoint thread; `worker` (another thread of the same process) leaves checkpoints to it.
 * Both share one SQLite write lock: `sqliteWriteLock`, or a new one. `main` also listens for the
 * other processes' changes (PostgreSQL) and keeps list totals for `cacheTtlMs` when configured.
 */
export function servingStoreOptions(
  config: WharfConfig,
  sqliteWriteLock: SharedArrayBuffer = createSqliteWriteLockMemory(),
): {
  main: OpenStoreOptions;
  worker: OpenStoreOptions;
} {
  const shared = { ...databaseOf(config), sqliteWriteLock };
  return {
    main: {
      ...shared,
      walCheckpoints: "own-thread",
      listenForChanges: true,
      ...(config.cacheTtlMs === undefined ? {} : { listCountTtlMs: config.cacheTtlMs }),
    },
    worker: { ...shared, walCheckpoints: "other-thread" },
  };
}

/**
 * Readies the database the configuration names, so that start-up fails with a clear cause: a
 * PostgreSQL database is created when missing and the role may (see `ensurePostgresDatabase`,
 * which also bounds the connect time); for SQLite the data folder is created and must be
 * writable. Rejects with `DatabaseSetupError`, or the system error naming the address or path.
 */
export async function prepareConfiguredDatabase(config: WharfConfig): Promise<void> {
  if (config.databaseUrl) {
    const { ensurePostgresDatabase } = await import("../storage/sql/ensure-postgres-database.js");
    await ensurePostgresDatabase(config.databaseUrl);
    return;
  }
  await mkdir(config.dataDir, { recursive: true });
  await access(config.dataDir, constants.W_OK);
}

/**
 * Opens (and migrates) the metadata store the configuration names: PostgreSQL URL, else SQLite,
 * after `prepareConfiguredDatabase`.
 */
export async function openConfiguredStore(config: WharfConfig): Promise<Store> {
  await prepareConfiguredDatabase(config);
  return openStore(databaseOf(config));
}
