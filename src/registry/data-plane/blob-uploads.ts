import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { setBounded } from "../../core/bounded-map.js";
import type { Clock } from "../../core/clock.js";
import type { EventRecorder } from "../../events/event-recorder.js";
import type { BlobDriver } from "../../storage/blobs/blob-driver.js";
import { blobKey, isUploadId, newUploadId, uploadKey } from "../../storage/blobs/blob-layout.js";
import type { BlobRow, UploadRow } from "../../storage/registry-store.js";
import type { Store } from "../../storage/store.js";
import { InvalidDigestError, UploadRangeError, UploadSessionError } from "../content-errors.js";
import { createDigester, type Digest, type DigestAlgorithm } from "../digest.js";
import { QuotaExceededError } from "../quotas/quota-errors.js";
import { admitBlob, principalOf, quotaEventSink, withRefusalRecorded } from "../quotas/storage-quota.js";
import { inRegistryLock } from "./registry-lock.js";
import { createUploadHasher, type RunningDigest, type UploadHasher } from "./upload-hasher.js";

/** Upload sessions over the blob driver: chunks append to the session's `uploadKey`; finishing verifies and commits. */
export interface BlobUploads {
  /** Opens a session for `repoUid` on behalf of `identityUid`. */
  start(repoUid: string, identityUid: string): Promise<UploadRow>;
  /** The session `id`, or undefined when there is none (or `id` is no upload id at all). */
  get(id: string): Promise<UploadSession | undefined>;
  /**
   * Appends `body` to the session; `rangeStart` (from Content-Range) must equal the bytes received
   * so far, else UploadRangeError carrying the size received. Returns the new size. A body that
   * breaks off midway leaves the session at its previous size. `length` is the body's declared
   * length when known (it picks where the running hash is computed).
   */
  append(upload: UploadRow, body: Readable, rangeStart?: number, length?: number): Promise<number>;
  /**
   * Appends the optional final `body`, checks the content against `digest` and makes the blob
   * visible in the session's repo; the session ends either way. A mismatch is InvalidDigestError and
   * stores nothing; so is a blob past the organization's storage quota (QuotaExceededError).
   */
  finish(upload: UploadRow, digest: Digest, body?: Readable, length?: number): Promise<BlobRow>;
  /** Ends a session and drops its bytes. */
  cancel(upload: UploadRow): Promise<void>;
  /** A whole blob in one request (POST with `digest`) by `identityUid`, verified like `finish`. */
  putMonolithic(
    repoUid: string,
    digest: Digest,
    body: Readable,
    length?: number,
    identityUid?: string,
  ): Promise<BlobRow>;
  /**
   * Links blob `digest` of repo `fromRepoUid` into repo `repoUid` (a cross-repository mount), under
   * the shared registry lock; false when `fromRepoUid` does not link it.
   */
  mount(fromRepoUid: string, repoUid: string, digest: string): Promise<boolean>;
  /** Drops the running hashes and stops the hashing worker (the registry server's close calls it). */
  close(): Promise<void>;
}

/** An upload session: its id, repo, starter and the bytes received so far. */
export type UploadSession = UploadRow;

const MAX_RUNNING_HASHES = 10_000;

/**
 * A running hash over a session's bytes, valid while `size` matches what the session holds.
 * `digest` is created with the first bytes (their declared length picks the thread it runs on).
 */
interface RunningHash {
  algorithm: DigestAlgorithm;
  digest: RunningDigest | undefined;
  size: number;
}

/**
 * Creates the upload logic. Hash state of sessions this process receives is kept in memory, so
 * finishing a chunked upload does not read the data back; a session continued on another process
 * (or after a restart) is hashed from storage when it finishes instead. Large bodies are hashed on
 * a worker thread (`hasher`) while this thread receives and writes them.
 */
export function createBlobUploads(opts: {
  store: Store;
  blobs: BlobDriver;
  clock: Clock;
  hasher?: UploadHasher;
  /** Where quota refusals are recorded (`quota.exceeded` events); none when absent. */
  events?: EventRecorder;
}): BlobUploads {
  const { store, blobs, clock } = opts;
  const hasher = opts.hasher ?? createUploadHasher();
  const running = new Map<string, RunningHash>();

  function forget(id: string): void {
    running.get(id)?.digest?.dispose();
    running.delete(id);
  }

  /** Streams `body` onto the session's bytes, feeding `digest` when given; returns the new total size. */
  async function appendBytes(id: string, body: Readable, digest: RunningDigest | undefined): Promise<number> {
    const tap = new Transform({
      highWaterMark: 1 << 20,
      transform(chunk: Buffer, _encoding, callback) {
        const behind = digest?.update(chunk);
        if (behind === undefined) callback(null, chunk);
        else behind.then(() => callback(null, chunk), callback);
      },
    });
    const [size] = await Promise.all([blobs.append(uploadKey(id), tap), pipeline(body, tap)]);
    // Between chunks the worker holds no bytes of this session (its ring goes back to the pool).
    await digest?.settle();
    return size;
  }

  async function contentDigest(id: string, digest: Digest, size: number): Promise<string> {
    const state = running.get(id);
    running.delete(id);
    if (state && state.size === size && state.algorithm === digest.algorithm) {
      // No digest yet means no bytes yet: the empty content is hashed below without reading.
      const hex = await state.digest?.digest();
      if (hex !== undefined) return hex;
    } else state?.digest?.dispose();
    const hash = createDigester(digest.algorithm);
    if (size > 0) {
      for await (const chunk of await blobs.read(uploadKey(id))) hash.update(chunk as Buffer);
    }
    return hash.digest("hex");
  }

  /**
   * Moves verified session bytes to the blob's key (or drops them when the blob is already stored)
   * and links it, under the shared registry lock so garbage collection cannot delete the bytes
   * between the check and the link.
   */
  async function commit(
    id: string,
    repoUid: string,
    digest: Digest,
    size: number,
    identityUid: string,
  ): Promise<BlobRow> {
    const target = blobKey(digest);
    const now = clock.now();
    const row: BlobRow = { digest: digest.value, size, createTime: now };
    const notify = opts.events && quotaEventSink(opts.events, { principal: principalOf(identityUid), clock });
    await withRefusalRecorded(store, notify, () =>
      inRegistryLock(store, "shared", async (tx) => {
        await admitBlob(tx, { repoUid, repository: "", digest: digest.value, size });
        const existing = await blobs.stat(target);
        if (existing && existing.size === size) await blobs.delete(uploadKey(id));
        else if (size === 0) {
          await blobs.put(target, Readable.from([]));
          await blobs.delete(uploadKey(id));
        } else await blobs.commit(uploadKey(id), target);
        await tx.blobs.link(repoUid, row, now);
      }),
    ).catch(async (err) => {
      // Refused before the bytes moved: nothing of the blob may remain.
      if (err instanceof QuotaExceededError) await blobs.delete(uploadKey(id));
      throw err;
    });
    return (await store.blobs.get(digest.value)) ?? row;
  }

  /**
   * Throws, ending the session, unless its stored bytes are exactly the `size` its row records. A
   * crash mid-chunk can leave bytes past the recorded size: appending after them or hashing them
   * would corrupt the blob, and no driver can cut them off (UploadSessionError `broken`). A crash while
   * finishing can leave a row whose bytes were already moved to the blob's key but never linked
   * (UploadSessionError `gone`: nothing of the session is left). `drain` discards the request body first.
   */
  async function requireIntactSession(upload: UploadRow, drain: () => void): Promise<void> {
    const stored = await blobs.stat(uploadKey(upload.id));
    if ((stored?.size ?? 0) === upload.size) return;
    drain();
    forget(upload.id);
    await store.uploads.delete(upload.id);
    await blobs.delete(uploadKey(upload.id));
    if (stored === undefined) {
      throw new UploadSessionError(
        "the upload's bytes are gone (interrupted while finishing); start it again",
        "gone",
      );
    }
    throw new UploadSessionError("the upload was interrupted mid-chunk; start it again", "broken");
  }

  async function verifyAndCommit(
    id: string,
    repoUid: string,
    digest: Digest,
    size: number,
    identityUid: string,
  ): Promise<BlobRow> {
    const actual = await contentDigest(id, digest, size);
    if (actual !== digest.hex) {
      await blobs.delete(uploadKey(id));
      throw new InvalidDigestError(`content digest is ${digest.algorithm}:${actual}, not ${digest.value}`);
    }
    return commit(id, repoUid, digest, size, identityUid);
  }

  return {
    async start(repoUid, identityUid) {
      const now = clock.now();
      const row: UploadRow = {
        id: newUploadId(),
        repoUid,
        identityUid,
        size: 0,
        createTime: now,
        updateTime: now,
      };
      await store.uploads.insert(row);
      // Abandoned sessions must not grow the map forever; the oldest just lose their fast path.
      setBounded(
        running,
        row.id,
        { algorithm: "sha256", digest: undefined, size: 0 },
        MAX_RUNNING_HASHES,
        (_id, state) => state.digest?.dispose(),
      );
      return row;
    },

    get: async (id) => (isUploadId(id) ? store.uploads.get(id) : undefined),

    async append(upload, body, rangeStart, length) {
      if (rangeStart !== undefined && rangeStart !== upload.size) {
        body.resume();
        throw new UploadRangeError(
          `chunk starts at ${rangeStart}, but ${upload.size} bytes were received so far`,
          upload.size,
        );
      }
      await requireIntactSession(upload, () => body.resume());
      const state = running.get(upload.id);
      const tracked = state !== undefined && state.size === upload.size ? state : undefined;
      if (!tracked) forget(upload.id);
      if (tracked && tracked.digest === undefined) tracked.digest = hasher.create(tracked.algorithm, length);
      let size: number;
      try {
        size = await appendBytes(upload.id, body, tracked?.digest);
      } catch (err) {
        forget(upload.id);
        throw err;
      }
      if (tracked) tracked.size = size;
      if (!(await store.uploads.advance(upload.id, upload.size, size, clock.now()))) {
        forget(upload.id);
        throw new UploadSessionError("the upload changed concurrently; restart it", "broken");
      }
      upload.size = size;
      return size;
    },

    async finish(upload, digest, body, length) {
      try {
        if (!body) await requireIntactSession(upload, () => {});
        const size = body ? await this.append(upload, body, undefined, length) : upload.size;
        return await verifyAndCommit(upload.id, upload.repoUid, digest, size, upload.identityUid);
      } finally {
        forget(upload.id);
        await store.uploads.delete(upload.id);
      }
    },

    async cancel(upload) {
      forget(upload.id);
      await store.uploads.delete(upload.id);
      await blobs.delete(uploadKey(upload.id));
    },

    async putMonolithic(repoUid, digest, body, length, identityUid = "") {
      const id = newUploadId();
      const runningDigest = hasher.create(digest.algorithm, length);
      try {
        const size = await appendBytes(id, body, runningDigest);
        running.set(id, { algorithm: digest.algorithm, digest: runningDigest, size });
        return await verifyAndCommit(id, repoUid, digest, size, identityUid);
      } catch (err) {
        runningDigest.dispose();
        running.delete(id);
        await blobs.delete(uploadKey(id));
        throw err;
      }
    },

    mount(fromRepoUid, repoUid, digest) {
      return inRegistryLock(store, "shared", async (tx) => {
        const blob = await tx.blobs.getLinked(fromRepoUid, digest);
        if (!blob) return false;
        await tx.blobs.link(repoUid, blob, clock.now());
        return true;
      });
    },

    async close() {
      for (const id of [...running.keys()]) forget(id);
      await hasher.close();
    },
  };
}
