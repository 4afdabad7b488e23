import type { Clock } from "../../core/clock.js";
import { traced } from "../../core/tracing.js";
import type { BlobDriver } from "../../storage/blobs/blob-driver.js";
import {
  BLOBS_PREFIX,
  blobKey,
  parseBlobKey,
  parseUploadKey,
  UPLOADS_PREFIX,
  uploadKey,
} from "../../storage/blobs/blob-layout.js";
import type { GarbageBounds } from "../../storage/registry-store.js";
import type { Store } from "../../storage/store.js";
import { parseDigest } from "../digest.js";
import { dryRunBlobs } from "./dry-run-blobs.js";
import { inRegistryLock } from "./registry-lock.js";

/** How far back garbage collection looks before removing anything. */
export interface GarbageCollectionOptions {
  /** Digests named by tag history this recent stay (default 30 days). */
  historyWindowMs?: number;
  /** Anything younger than this stays, so pushes in flight are never cut (default 1 hour). */
  graceMs?: number;
  /** Upload sessions idle this long are abandoned (default 24 hours). */
  uploadTtlMs?: number;
  /** Told as the run goes: each phase's start and each object it examines (for a progress display). */
  onProgress?: (progress: GarbageProgress) => void;
  /**
   * Report what a run would remove now, removing nothing: every phase runs as a run does, in one
   * transaction that is rolled back, with blob storage untouched (see {@link collectGarbage}).
   */
  dryRun?: boolean;
}

/** The phases of a run, in order. */
export const GARBAGE_PHASES = [
  "uploads",
  "stray uploads",
  "manifests",
  "links",
  "blobs",
  "stray blobs",
] as const;

/** Where a run stands: the phase, what it examined and removed so far, and the bytes freed in all. */
export interface GarbageProgress {
  phase: (typeof GARBAGE_PHASES)[number];
  /** 0-based index of `phase` in GARBAGE_PHASES. */
  phaseIndex: number;
  /** Objects (sessions, keys, manifests, blobs) the phase looked at so far. */
  examined: number;
  /** Of those, removed. */
  removed: number;
  /** Bytes of blobs removed since the run began. */
  bytesFreed: number;
}

/** What one run removed. */
export interface GarbageReport {
  manifests: number;
  links: number;
  blobs: number;
  bytes: number;
  uploads: number;
  strayObjects: number;
}

const DAY = 24 * 60 * 60 * 1000;
const BATCH = 500;

/**
 * Removes what no tag, recent tag history or upload in progress can reach: dead manifests (see
 * GarbageStore for the rules; repeated until none is left, since deleting an index frees its
 * children), repo links to blobs no remaining manifest references, blobs no repo links (bytes and
 * row), abandoned upload sessions and stray objects a crash left in blob storage. Every deletion
 * runs in its own transaction under the exclusive registry lock and re-checks its rule there, while
 * pushes commit under the shared lock: a concurrent push either lands before (and keeps what it
 * references) or after (and finds the blob gone, so it uploads it again).
 */
export async function collectGarbage(
  deps: { store: Store; blobs: BlobDriver; clock: Clock },
  options: GarbageCollectionOptions = {},
): Promise<GarbageReport> {
  if (options.dryRun !== true)
    return sweep(deps, options, (fn) => inRegistryLock(deps.store, "exclusive", fn));
  return dryRun(deps, options);
}

/** Rolls back the dry run's transaction once its report is in. */
class DryRunRollback extends Error {
  constructor(readonly report: GarbageReport) {
    super("garbage collection dry run: rolled back");
  }
}

/**
 * A dry run: the same phases, in ONE transaction that is then rolled back, against blob storage
 * that deletes nothing (dryRunBlobs), so the report counts exactly what a run would remove now,
 * children of removed indexes included. It takes no registry lock (nothing it does commits), so
 * pushes go on beside it on PostgreSQL; SQLite holds its single write lock for the duration, so
 * writers wait on it there.
 */
async function dryRun(
  deps: { store: Store; blobs: BlobDriver; clock: Clock },
  options: GarbageCollectionOptions,
): Promise<GarbageReport> {
  const blobs = dryRunBlobs(deps.blobs);
  try {
    await deps.store.transaction(async (tx) => {
      throw new DryRunRollback(await sweep({ ...deps, store: tx, blobs }, options, (fn) => fn(tx)));
    });
  } catch (err) {
    if (err instanceof DryRunRollback) return err.report;
    throw err;
  }
  throw new Error("unreachable: a dry run always rolls back");
}

/** The phases of a run; `exclusively` runs each deletion with its re-check (see collectGarbage). */
async function sweep(
  deps: { store: Store; blobs: BlobDriver; clock: Clock },
  options: GarbageCollectionOptions,
  exclusively: <T>(fn: (tx: Store) => Promise<T>) => Promise<T>,
): Promise<GarbageReport> {
  const { store, blobs, clock } = deps;
  const now = clock.now();
  const graceStart = now - (options.graceMs ?? 60 * 60 * 1000);
  const bounds: GarbageBounds = { graceStart, windowStart: now - (options.historyWindowMs ?? 30 * DAY) };
  const uploadCutoff = now - (options.uploadTtlMs ?? DAY);
  const report: GarbageReport = { manifests: 0, links: 0, blobs: 0, bytes: 0, uploads: 0, strayObjects: 0 };
  let current: GarbageProgress | undefined;
  const phase = (name: GarbageProgress["phase"]) => {
    current = {
      phase: name,
      phaseIndex: GARBAGE_PHASES.indexOf(name),
      examined: 0,
      removed: 0,
      bytesFreed: report.bytes,
    };
    options.onProgress?.({ ...current });
  };
  const examined = (count: number, removed: number) => {
    if (!current) return;
    current.examined += count;
    current.removed += removed;
    current.bytesFreed = report.bytes;
    options.onProgress?.({ ...current });
  };
  // Each phase is a `gc <phase>` span (ADR 0042), its transactions and blob deletions inside it.
  const inPhase = (name: GarbageProgress["phase"], run: () => Promise<void>) => {
    phase(name);
    return traced(`gc ${name}`, { "wharf.gc.phase": name }, run);
  };

  await inPhase("uploads", async () => {
    for (const upload of await store.uploads.staleBefore(uploadCutoff)) {
      await store.uploads.delete(upload.id);
      await blobs.delete(uploadKey(upload.id));
      report.uploads++;
      examined(1, 1);
    }
  });
  // The stray sweeps list only the two prefixes and skip keys the layout does not parse there: other
  // objects, such as the blob store's identity, are never candidates.
  await inPhase("stray uploads", async () => {
    for await (const object of blobs.list(UPLOADS_PREFIX)) {
      const id = parseUploadKey(object.key);
      if (id === undefined) continue;
      const stray = object.modifiedTime < uploadCutoff && !(await store.uploads.get(id));
      if (stray) {
        await blobs.delete(object.key);
        report.strayObjects++;
      }
      examined(1, stray ? 1 : 0);
    }
  });

  await inPhase("manifests", async () => {
    for (;;) {
      const dead = await store.garbage.deadManifests(bounds, BATCH);
      let deleted = 0;
      for (const { repoUid, digest } of dead) {
        const removed = await exclusively((tx) => tx.garbage.deleteIfDead(repoUid, digest, bounds));
        if (removed) deleted++;
        examined(1, removed ? 1 : 0);
      }
      report.manifests += deleted;
      if (deleted === 0) break;
    }
  });

  await inPhase("links", async () => {
    report.links = await exclusively((tx) => tx.garbage.deleteUnreferencedLinks(graceStart));
    examined(report.links, report.links);
  });

  await inPhase("blobs", async () => {
    const failed = new Set<string>();
    for (;;) {
      const orphans = (await store.garbage.orphanBlobs(graceStart, BATCH)).filter(
        (b) => !failed.has(b.digest),
      );
      if (orphans.length === 0) break;
      for (const blob of orphans) {
        try {
          const removed = await exclusively(async (tx) => {
            if (!(await tx.garbage.deleteIfOrphan(blob.digest, graceStart))) return false;
            // Inside the lock: an upload of the same digest waits, then finds no bytes and writes its own.
            await blobs.delete(blobKey(parseDigest(blob.digest)));
            return true;
          });
          if (removed) {
            report.blobs++;
            report.bytes += blob.size;
          }
          examined(1, removed ? 1 : 0);
        } catch {
          failed.add(blob.digest);
          examined(1, 0);
        }
      }
    }
  });

  await inPhase("stray blobs", async () => {
    for await (const object of blobs.list(BLOBS_PREFIX)) {
      const digest = digestStoredAt(object.key);
      if (digest === undefined || object.modifiedTime >= graceStart) continue;
      const stray = await exclusively(async (tx) => {
        if (await tx.blobs.get(digest)) return false;
        await blobs.delete(object.key);
        return true;
      });
      if (stray) report.strayObjects++;
      examined(1, stray ? 1 : 0);
    }
  });
  return report;
}

/**
 * The digest whose bytes `key` holds, or undefined for a foreign object: a key the layout does not
 * parse, or one naming an algorithm or hex the registry would never store.
 */
function digestStoredAt(key: string): string | undefined {
  const address = parseBlobKey(key);
  if (address === undefined) return undefined;
  try {
    return parseDigest(`${address.algorithm}:${address.hex}`).value;
  } catch {
    return undefined;
  }
}
