import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { copyFile, link, mkdir, readdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pipeline } from "node:stream/promises";
import { type BlobDriver, BlobNotFoundError, BlobSizeMismatchError } from "../blobs/blob-driver.js";
import { blobKey } from "../blobs/blob-layout.js";
import type { DatabaseBackupFormat, DatabaseSnapshot } from "../sql/database-backup.js";
import { type BackupManifest, type BackupObject, writeBackupManifest } from "./backup-manifest.js";

/** The backup folder exists and holds something: nothing was written. */
export class BackupTargetError extends Error {
  override readonly name = "BackupTargetError";
}

/** How many metadata snapshots a backup takes at most while garbage collection removes blobs. */
export const MAX_SNAPSHOTS = 5;

/** What `takeBackup` needs: where the data is, and how to snapshot the database. */
export interface BackupSource {
  engine: "sqlite" | "postgres";
  /** The database file's name in the backup folder and its format. */
  database: { file: string; format: DatabaseBackupFormat };
  /** Writes a snapshot of the database to `file` (which does not exist) and lists its blobs. */
  snapshot(file: string): Promise<DatabaseSnapshot>;
  blobs: BlobDriver;
  /** The filesystem blob store's root folder, for hard links; undefined for other stores. */
  blobRoot: string | undefined;
  /** Whether the LIVE metadata still records blob `digest` (re-read when its bytes are gone). */
  stillRecorded(digest: string): Promise<boolean>;
  /** Checked before the folder is claimed (a missing pg_dump fails here, writing nothing). */
  ready?(): Promise<unknown>;
}

/** What a backup did, for its report. */
export interface BackupReport {
  dir: string;
  snapshots: number;
  blobs: number;
  bytes: number;
  linked: number;
  copied: number;
  /** Blobs the metadata records that blob storage lacks or holds with another size. */
  missing: BackupManifest["missing"];
}

/**
 * Backs up a running deployment into `dir`, which must not exist or be an empty folder (else
 * rejects with {@link BackupTargetError}, writing nothing):
 *
 * 1. a snapshot of the metadata (`source.snapshot`: one consistent database state);
 * 2. every blob that snapshot records, under its blob store key: hard-linked from a filesystem
 *    store where the filesystem allows (same device), else copied (S3 objects are read and
 *    written as files), each checked against its recorded size;
 * 3. `wharf-backup.json`, listing the database file and every blob with its digest and size, last.
 *
 * A blob whose bytes are gone is re-read in the live metadata: when it is no longer recorded,
 * garbage collection removed it after the snapshot (it collects a blob only once no manifest
 * references it), so the snapshot is taken again and the copy goes on with the blobs the new one
 * records (those already copied stay), at most {@link MAX_SNAPSHOTS} times. A blob the live
 * metadata still records but storage lacks (or holds with another size) is damage: it is listed as
 * `missing` in the manifest and the report, and the backup goes on.
 */
export async function takeBackup(
  dir: string,
  source: BackupSource,
  onProgress: (line: string) => void = () => {},
): Promise<BackupReport> {
  await source.ready?.();
  await claimEmptyFolder(dir);
  const dbPath = join(dir, source.database.file);
  const copied = new Map<string, { path: string; size: number }>();
  let linked = 0;
  let snapshot: DatabaseSnapshot | undefined;
  let missing: BackupManifest["missing"] = [];
  let snapshots = 0;
  for (;;) {
    snapshots++;
    await rm(dbPath, { force: true });
    const createdAt = new Date().toISOString();
    snapshot = await source.snapshot(dbPath);
    onProgress(`database snapshot ${snapshots} (${source.engine}): ${snapshot.blobs.length} blobs recorded`);
    missing = [];
    let collected = 0;
    for (const blob of snapshot.blobs) {
      if (copied.has(blob.digest)) continue;
      const path = keyOf(blob.digest);
      const outcome = await copyBlob(source, path, join(dir, path), blob.size);
      if (outcome === "gone") {
        if (await source.stillRecorded(blob.digest)) missing.push({ digest: blob.digest, size: blob.size });
        else collected++;
        continue;
      }
      if (outcome === "wrong size") {
        missing.push({ digest: blob.digest, size: blob.size });
        continue;
      }
      if (outcome === "linked") linked++;
      copied.set(blob.digest, { path, size: blob.size });
    }
    if (collected === 0) {
      await finish(dir, source, snapshot, copied, missing, createdAt);
      onProgress(`done: ${copied.size} blobs (${linked} hard-linked), ${missing.length} missing`);
      return {
        dir,
        snapshots,
        blobs: copied.size,
        bytes: [...copied.values()].reduce((sum, b) => sum + b.size, 0),
        linked,
        copied: copied.size - linked,
        missing,
      };
    }
    if (snapshots >= MAX_SNAPSHOTS) {
      throw new Error(
        `garbage collection removed blobs of each of ${MAX_SNAPSHOTS} snapshots while the backup copied them; run the backup again when wharf gc is not running (${dir} is incomplete: it has no ${"wharf-backup.json"})`,
      );
    }
    onProgress(`${collected} blobs were collected by garbage collection after the snapshot: taking it again`);
  }
}

/** Drops blobs of earlier snapshots the final one no longer records, then writes the manifest. */
async function finish(
  dir: string,
  source: BackupSource,
  snapshot: DatabaseSnapshot,
  copied: Map<string, { path: string; size: number }>,
  missing: BackupManifest["missing"],
  createdAt: string,
): Promise<void> {
  const wanted = new Set(snapshot.blobs.map((b) => b.digest));
  for (const [digest, blob] of copied) {
    if (wanted.has(digest)) continue;
    await rm(join(dir, blob.path), { force: true });
    copied.delete(digest);
  }
  const dbPath = join(dir, source.database.file);
  const database: BackupObject & { format: DatabaseBackupFormat } = {
    path: source.database.file,
    size: (await stat(dbPath)).size,
    digest: await sha256File(dbPath),
    format: source.database.format,
  };
  await writeBackupManifest(dir, {
    format: "wharf-backup",
    version: 1,
    createdAt,
    engine: source.engine,
    ...(snapshot.storeId !== undefined && { storeId: snapshot.storeId }),
    database,
    blobs: [...copied.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([digest, b]) => ({ path: b.path, size: b.size, digest })),
    missing,
  });
}

/**
 * Copies the blob at key `path` into `dest`: a hard link from a filesystem store when possible,
 * else a copy of its bytes (written to a temporary name, then renamed). "gone" when storage has no
 * object; "wrong size" when it holds one of another size than `size`.
 */
async function copyBlob(
  source: BackupSource,
  path: string,
  dest: string,
  size: number,
): Promise<"linked" | "copied" | "gone" | "wrong size"> {
  await mkdir(dirname(dest), { recursive: true });
  if (source.blobRoot !== undefined) {
    const from = join(source.blobRoot, path);
    const found = await stat(from).catch(() => undefined);
    if (found === undefined || !found.isFile()) return "gone";
    if (found.size !== size) return "wrong size";
    try {
      await link(from, dest);
      return "linked";
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === "ENOENT") return "gone";
      // Another device (EXDEV), or a filesystem without hard links: copy.
      await copyFile(from, `${dest}.partial`);
      await rename(`${dest}.partial`, dest);
      return "copied";
    }
  }
  try {
    const body = await source.blobs.read(path, undefined, { size });
    await pipeline(body, createWriteStream(`${dest}.partial`));
    await rename(`${dest}.partial`, dest);
    return "copied";
  } catch (err) {
    await rm(`${dest}.partial`, { force: true });
    if (err instanceof BlobNotFoundError) return "gone";
    if (err instanceof BlobSizeMismatchError) return "wrong size";
    throw err;
  }
}

/** The blob store key of `digest` (`<algorithm>:<hex>`). */
export function keyOf(digest: string): string {
  const colon = digest.indexOf(":");
  return blobKey({ algorithm: digest.slice(0, colon), hex: digest.slice(colon + 1) });
}

/** `sha256:<hex>` of the file at `path`, streamed. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return `sha256:${hash.digest("hex")}`;
}

/** Creates `dir`, or accepts it when it is an empty folder; else BackupTargetError, nothing written. */
async function claimEmptyFolder(dir: string): Promise<void> {
  const entries = await readdir(dir).catch((err: { code?: string }) => {
    if (err.code === "ENOENT") return undefined;
    if (err.code === "ENOTDIR")
      throw new BackupTargetError(
        `${dir} is a file: a backup goes into a new or empty folder; nothing was written`,
      );
    throw err;
  });
  if (entries === undefined) {
    await mkdir(dir, { recursive: true });
    return;
  }
  if (entries.length > 0) {
    throw new BackupTargetError(
      `${dir} is not empty (${entries.length} entries): a backup goes into a new or empty folder; nothing was written`,
    );
  }
}
