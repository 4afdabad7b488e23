import { access, copyFile, mkdir, rename, rm } from "node:fs/promises";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { ensurePostgresDatabase } from "./ensure-postgres-database.js";
import { findPostgresTool, libpqTarget, runPostgresTool } from "./postgres-tools.js";

/** A blob the snapshot's metadata records: what the backup must copy. */
export interface SnapshotBlob {
  digest: string;
  size: number;
}

/** What a metadata snapshot holds, for the blob copy that follows it. */
export interface DatabaseSnapshot {
  /** Every blob row of the snapshot, in digest order. */
  blobs: SnapshotBlob[];
  /** The snapshot's store id (the `store_id` setting, ADR 0016), or undefined when it has none yet. */
  storeId: string | undefined;
}

/** How a backup's database file was written. */
export type DatabaseBackupFormat = "sqlite" | "pg_dump-custom";

/** Pages per backup step: the whole database in one step, so it is one read transaction. */
const ALL_PAGES = 0x7fffffff;

const BLOBS_QUERY = "select digest, size from blobs order by digest";
const STORE_ID_QUERY = "select value from settings where key = 'store_id'";

/**
 * Copies the SQLite database at `sqlitePath` to `destFile` (which must not exist) through SQLite's
 * online backup API while servers keep writing: the whole database is copied in one step, under one
 * read transaction, so the copy is one committed state (WAL readers never block writers). The copy
 * is turned into a self-contained rollback-journal file and its blob rows are read back from it.
 */
export async function snapshotSqlite(sqlitePath: string, destFile: string): Promise<DatabaseSnapshot> {
  await access(sqlitePath);
  const source = new Database(sqlitePath, { fileMustExist: true, timeout: 5000 });
  try {
    await source.backup(destFile, { progress: () => ALL_PAGES });
  } finally {
    source.close();
  }
  const copy = new Database(destFile, { fileMustExist: true });
  try {
    copy.pragma("journal_mode = DELETE");
    return readSnapshot(
      copy.prepare(BLOBS_QUERY).all() as { digest: string; size: number | bigint }[],
      copy.prepare(STORE_ID_QUERY).get() as { value: string } | undefined,
    );
  } finally {
    copy.close();
  }
}

/**
 * Dumps the PostgreSQL database at `url` into `destFile` with `pg_dump --format=custom` while
 * servers keep writing, and reads the dump's blob rows from the SAME snapshot: a REPEATABLE READ
 * transaction exports its snapshot (`pg_export_snapshot`), pg_dump runs with `--snapshot`, and the
 * blob rows are read in that transaction. Rejects with PostgresToolMissingError (nothing written)
 * when pg_dump is not installed (see findPostgresTool), or with pg_dump's failure.
 */
export async function snapshotPostgres(
  url: string,
  destFile: string,
  env: NodeJS.ProcessEnv,
): Promise<DatabaseSnapshot> {
  const pgDump = await findPostgresTool("pg_dump", env);
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => {});
  await client.connect();
  try {
    await client.query("begin isolation level repeatable read read only");
    const snapshot = (await client.query<{ id: string }>("select pg_export_snapshot() as id")).rows[0]?.id;
    if (snapshot === undefined) throw new Error("pg_export_snapshot returned nothing");
    const target = libpqTarget(url, env);
    const dumping = runPostgresTool(
      pgDump,
      [
        "--format=custom",
        `--snapshot=${snapshot}`,
        "--no-password",
        `--file=${destFile}`,
        `--dbname=${target.dbname}`,
      ],
      target.env,
    );
    dumping.catch(() => {});
    const blobs = (await client.query<{ digest: string; size: string }>(BLOBS_QUERY)).rows;
    const storeId = (await client.query<{ value: string }>(STORE_ID_QUERY)).rows[0];
    await dumping;
    await client.query("commit");
    return readSnapshot(blobs, storeId);
  } finally {
    await client.end().catch(() => {});
  }
}

function readSnapshot(
  rows: { digest: string; size: number | bigint | string }[],
  storeId: { value: string } | undefined,
): DatabaseSnapshot {
  return {
    blobs: rows.map((r) => ({ digest: r.digest, size: Number(r.size) })),
    storeId: storeId?.value,
  };
}

/**
 * Whether the target of a restore holds nothing: the SQLite file does not exist, or the PostgreSQL
 * database has no table in any schema but the system's. A PostgreSQL database that does not exist
 * yet counts as empty (`restoreDatabase` creates it).
 */
export async function databaseIsEmpty(
  target: { sqlitePath: string } | { databaseUrl: string },
): Promise<boolean> {
  if ("sqlitePath" in target) {
    return access(target.sqlitePath).then(
      () => false,
      () => true,
    );
  }
  const client = new pg.Client({ connectionString: target.databaseUrl });
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (err) {
    // 3D000: the database does not exist yet.
    if ((err as { code?: string }).code === "3D000") return true;
    throw err;
  }
  try {
    const { rows } = await client.query<{ n: string }>(
      "select count(*) as n from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema')",
    );
    return Number(rows[0]?.n ?? 0) === 0;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Writes the backup's database file `file` (in `format`) into the empty target: a SQLite file is
 * copied next to its destination and renamed into place (a crash leaves no half file under the
 * database's name); a pg_dump archive is restored (the database created first when missing) with `pg_restore --single-transaction
 * --exit-on-error --no-owner --no-privileges` (all or nothing). Rejects with
 * PostgresToolMissingError when pg_restore is needed and not installed.
 */
export async function restoreDatabase(
  file: string,
  format: DatabaseBackupFormat,
  target: { sqlitePath: string } | { databaseUrl: string },
  env: NodeJS.ProcessEnv,
): Promise<void> {
  if ("sqlitePath" in target) {
    if (format !== "sqlite") throw new Error(`a ${format} backup restores into PostgreSQL, not SQLite`);
    const partial = `${target.sqlitePath}.restoring`;
    await mkdir(dirname(target.sqlitePath), { recursive: true });
    try {
      await copyFile(file, partial);
      await rename(partial, target.sqlitePath);
    } finally {
      await rm(partial, { force: true });
    }
    return;
  }
  if (format !== "pg_dump-custom") throw new Error(`a ${format} backup restores into SQLite, not PostgreSQL`);
  const pgRestore = await findPostgresTool("pg_restore", env);
  await ensurePostgresDatabase(target.databaseUrl);
  const t = libpqTarget(target.databaseUrl, env);
  await runPostgresTool(
    pgRestore,
    [
      "--single-transaction",
      "--exit-on-error",
      "--no-owner",
      "--no-privileges",
      "--no-password",
      `--dbname=${t.dbname}`,
      file,
    ],
    t.env,
  );
}
