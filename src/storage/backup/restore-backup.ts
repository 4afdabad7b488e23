import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { BlobDriver } from "../blobs/blob-driver.js";
import { BLOB_STORE_ID_KEY } from "../blobs/blob-layout.js";
import { type DatabaseBackupFormat, databaseIsEmpty, restoreDatabase } from "../sql/database-backup.js";
import { BackupFormatError, type BackupManifest, readBackupManifest } from "./backup-manifest.js";
import { sha256File } from "./take-backup.js";

/** The restore target holds data, or does not fit the backup: nothing was changed. */
export class RestoreTargetError extends Error {
  override readonly name = "RestoreTargetError";
}

/** Where a restore writes: the configured database and blob store. */
export interface RestoreTarget {
  database: { sqlitePath: string } | { databaseUrl: string };
  blobs: BlobDriver;
  /** For messages: the database and blob store locations (no secrets). */
  where: { database: string; blobStore: string };
  env: NodeJS.ProcessEnv;
}

/** What a restore did. */
export interface RestoreReport {
  engine: BackupManifest["engine"];
  storeId: string | undefined;
  blobs: number;
  bytes: number;
  /** Blobs the backup's metadata records that the backup could not hold (see BackupManifest.missing). */
  missing: number;
}

/**
 * Restores the backup in `dir` into `target`, which must be empty: no SQLite file (or a PostgreSQL
 * database without tables) and a blob store without objects. Refuses, changing nothing, with
 * {@link RestoreTargetError} when it is not, or when the backup's engine is not the target's; with
 * BackupFormatError when `dir` holds no finished backup, or its database file does not hash to
 * the manifest's digest.
 *
 * Then every blob is streamed from the backup into the blob store through a hash: an object whose
 * bytes do not hash to its digest (or are not its size) fails its `put`, so it never becomes
 * visible, and the restore stops. The database is written last (SQLite: copied and renamed into
 * place; PostgreSQL: pg_restore in one transaction), then the blob store is stamped with the
 * backup's store id (ADR 0016). On any failure after the checks, the blobs already written and the
 * stamp are deleted again, so the target is empty as it was (a PostgreSQL restore is one
 * transaction; a SQLite file is renamed into place only once complete).
 */
export async function restoreBackup(
  dir: string,
  target: RestoreTarget,
  onProgress: (line: string) => void = () => {},
): Promise<RestoreReport> {
  const manifest = await readBackupManifest(dir);
  const targetEngine = "sqlitePath" in target.database ? "sqlite" : "postgres";
  const refuse = (why: string): never => {
    throw new RestoreTargetError(
      `cannot restore ${dir} into ${target.where.database} and ${target.where.blobStore}: ${why}; nothing was changed`,
    );
  };
  if (manifest.engine !== targetEngine) {
    refuse(`the backup is of a ${manifest.engine} deployment and the target database is ${targetEngine}`);
  }
  if (!(await databaseIsEmpty(target.database))) refuse("the database is not empty");
  for await (const object of target.blobs.list(""))
    refuse(`the blob store is not empty (it holds ${object.key})`);
  const dbFile = join(dir, manifest.database.path);
  const dbDigest = await sha256File(dbFile).catch(() => undefined);
  if (dbDigest !== manifest.database.digest) {
    throw new BackupFormatError(
      `${dbFile} ${dbDigest === undefined ? "is missing" : `hashes to ${dbDigest}, the manifest says ${manifest.database.digest}`}: the backup is damaged; nothing was changed`,
    );
  }
  onProgress(`backup of ${manifest.createdAt} (${manifest.engine}): ${manifest.blobs.length} blobs`);

  const written: string[] = [];
  let bytes = 0;
  try {
    for (const blob of manifest.blobs) {
      await target.blobs.put(blob.path, verified(join(dir, blob.path), blob.digest, blob.size, blob.path));
      written.push(blob.path);
      bytes += blob.size;
    }
    onProgress(`blobs: ${written.length} restored and verified`);
    await restoreDatabase(
      dbFile,
      manifest.database.format as DatabaseBackupFormat,
      target.database,
      target.env,
    );
    onProgress("database restored");
    if (manifest.storeId !== undefined) {
      await target.blobs.put(BLOB_STORE_ID_KEY, Readable.from([Buffer.from(`${manifest.storeId}\n`)]));
      written.push(BLOB_STORE_ID_KEY);
    }
  } catch (err) {
    for (const key of written) await target.blobs.delete(key).catch(() => {});
    throw err;
  }
  return {
    engine: manifest.engine,
    storeId: manifest.storeId,
    blobs: manifest.blobs.length,
    bytes,
    missing: manifest.missing.length,
  };
}

/**
 * The file at `file` as a stream that fails (so a `put` of it writes nothing) when its bytes are not
 * `size` long or do not hash to `digest` (`<algorithm>:<hex>`), with a BackupFormatError naming
 * `path`. Nothing is read until the blob store reads it: a store that prepares before it reads must
 * not meet an error nobody listens for yet (a small damaged file used to fail before that).
 */
function verified(file: string, digest: string, size: number, path: string): Readable {
  const colon = digest.indexOf(":");
  async function* checked(): AsyncGenerator<Buffer> {
    const hash = createHash(digest.slice(0, colon));
    let seen = 0;
    for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      seen += chunk.length;
      yield chunk;
    }
    const actual = `${digest.slice(0, colon)}:${hash.digest("hex")}`;
    if (seen !== size || actual !== digest) {
      throw new BackupFormatError(
        `${path} in the backup is damaged: ${seen} bytes hashing to ${actual}, the manifest says ${size} bytes of ${digest}`,
      );
    }
  }
  return Readable.from(checked(), { objectMode: false });
}
