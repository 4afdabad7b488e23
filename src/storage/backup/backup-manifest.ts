import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { DatabaseBackupFormat } from "../sql/database-backup.js";

/** The file in a backup folder that lists what it holds; written last, so its presence means complete. */
export const BACKUP_MANIFEST_FILE = "wharf-backup.json";

/** One object of a backup: a path inside the backup folder, its size and its digest. */
export interface BackupObject {
  /** Relative to the backup folder, `/`-separated (a blob's is its blob store key). */
  path: string;
  size: number;
  /** `<algorithm>:<hex>` of the bytes (a blob's digest is its name). */
  digest: string;
}

/**
 * What `wharf backup` wrote (`wharf-backup.json`, format 1): the engine and store id (ADR 0016)
 * of the deployment, the database file, every blob the database's snapshot records, and the blobs
 * it records that blob storage did not hold when the backup ran (`missing`: damage the backup
 * carries over, which `wharf fsck` then reports).
 */
export interface BackupManifest {
  format: "wharf-backup";
  version: 1;
  /** When the database snapshot was taken (RFC 3339). */
  createdAt: string;
  engine: "sqlite" | "postgres";
  /** The deployment's store id, or undefined for one that never bound a blob store. */
  storeId?: string | undefined;
  database: BackupObject & { format: DatabaseBackupFormat };
  blobs: BackupObject[];
  missing: { digest: string; size: number }[];
}

/** A backup folder that cannot be restored: no manifest, or one that is not a Wharf backup's. */
export class BackupFormatError extends Error {
  override readonly name = "BackupFormatError";
}

/** Writes `manifest` into `dir` atomically (a temporary file renamed into place). */
export async function writeBackupManifest(dir: string, manifest: BackupManifest): Promise<void> {
  const partial = join(dir, `${BACKUP_MANIFEST_FILE}.partial`);
  await writeFile(partial, `${JSON.stringify(manifest, null, 1)}\n`);
  await rename(partial, join(dir, BACKUP_MANIFEST_FILE));
}

const DIGEST = /^[a-z0-9]+:[0-9a-f]{32,}$/;
const SAFE_PATH = /^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/;

/**
 * Reads and checks the manifest of the backup in `dir`. Rejects with {@link BackupFormatError}
 * naming the problem when there is none (an unfinished backup has none) or it is malformed: an
 * unknown format or version, a path leaving the folder, a malformed digest or size.
 */
export async function readBackupManifest(dir: string): Promise<BackupManifest> {
  const file = join(dir, BACKUP_MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as { code?: string }).code === "ENOENT") {
      throw new BackupFormatError(`${dir} holds no finished Wharf backup (no ${BACKUP_MANIFEST_FILE})`);
    }
    throw err;
  }
  const bad = (why: string): never => {
    throw new BackupFormatError(`${file} is not a Wharf backup manifest: ${why}`);
  };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return bad("not JSON");
  }
  const m = value as Partial<BackupManifest>;
  if (m.format !== "wharf-backup") bad('"format" is not "wharf-backup"');
  if (m.version !== 1) bad(`version ${JSON.stringify(m.version)} is not one this wharf reads (1)`);
  if (m.engine !== "sqlite" && m.engine !== "postgres") bad('"engine" is neither "sqlite" nor "postgres"');
  if (m.storeId !== undefined && !/^[0-9a-f]{32}$/.test(String(m.storeId)))
    bad('"storeId" is not a store id');
  const object = (o: unknown, where: string): BackupObject => {
    const x = o as Partial<BackupObject>;
    if (typeof x?.path !== "string" || !SAFE_PATH.test(x.path) || x.path.split("/").includes(".."))
      bad(`${where}: "path" must be a relative path inside the backup`);
    if (!Number.isSafeInteger(x.size) || (x.size as number) < 0) bad(`${where}: "size" must be a byte count`);
    if (typeof x.digest !== "string" || !DIGEST.test(x.digest)) bad(`${where}: "digest" is malformed`);
    return x as BackupObject;
  };
  const db = object(m.database, "database");
  const format = (m.database as { format?: unknown }).format;
  if (format !== "sqlite" && format !== "pg_dump-custom") bad('database "format" is unknown');
  if ((format === "sqlite") !== (m.engine === "sqlite"))
    bad(`database format ${format} does not fit engine ${m.engine}`);
  if (!Array.isArray(m.blobs)) bad('"blobs" is not a list');
  const blobs = (m.blobs as unknown[]).map((b, i) => object(b, `blobs[${i}]`));
  const missing = Array.isArray(m.missing) ? m.missing : bad('"missing" is not a list');
  return {
    format: "wharf-backup",
    version: 1,
    createdAt: String(m.createdAt),
    engine: m.engine as BackupManifest["engine"],
    storeId: m.storeId,
    database: { ...db, format: format as DatabaseBackupFormat },
    blobs,
    missing: missing as BackupManifest["missing"],
  };
}
