import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import type { BlobDriver } from "./blobs/blob-driver.js";
import { BLOB_STORE_ID_KEY, BLOBS_PREFIX, parseBlobKey } from "./blobs/blob-layout.js";
import type { Store } from "./store.js";

/** The setting holding the metadata store's id (the same id is stamped into its blob store). */
export const STORE_ID_SETTING = "store_id";
/** The setting recording that a blob store was stamped with that id (the binding completed once). */
export const BLOB_STORE_BOUND_SETTING = "blob_store_bound";

const STORE_ID = /^[0-9a-f]{32}$/;
/** Longest stamp read back; a real one is 33 bytes (id and newline). */
const MAX_STAMP_BYTES = 1024;

/** Where the two stores live, for messages: never with a password or secret in them. */
export interface StorageLocations {
  /** The database: a redacted PostgreSQL URL or the SQLite file's path. */
  database: string;
  /** The blob store: a folder, a redacted `s3://…` URL or `memory:`. */
  blobStore: string;
}

/**
 * The metadata store and the blob store are not one deployment's pair; nothing was changed. The
 * message is one line naming both locations and what to do; the CLI prints it and exits 1.
 */
export class BlobStoreMismatchError extends Error {
  override readonly name = "BlobStoreMismatchError";
}

/**
 * Checks that `blobs` belongs to `store` before anything reads, writes or deletes blobs, binding
 * them on first use. The metadata store keeps a random id (setting {@link STORE_ID_SETTING}); its
 * blob store keeps the same id in the object {@link BLOB_STORE_ID_KEY}. Resolves with the id when:
 *
 * - both carry the same id;
 * - the blob store has no id and holds no blobs, and the metadata store records none (a fresh
 *   pair, or a new empty blob store for a metadata store that has stored no blobs yet): the blob
 *   store is stamped (and the metadata store, when it had no id);
 * - neither carries an id yet, or the metadata store has an id but its binding never completed,
 *   and both hold blobs (a deployment from before ids existed) with at least half of a sample of
 *   the blob store's blobs recorded in the metadata store: both are stamped.
 *
 * Rejects with {@link BlobStoreMismatchError}, changing nothing, when the ids differ; when the blob
 * store has an id and the metadata store none; when the metadata store's id is bound and the blob
 * store has no id but holds blobs (another deployment's data), or holds none while the metadata
 * store records blobs (a wrong location, or lost blobs); when one side holds blobs the other does
 * not; and when the metadata store knows fewer than half of the sampled blobs of an unbound pair.
 * Other failures (I/O, database) reject as they are.
 *
 * Concurrency: servers starting at once on one database agree on one id (both sides are written
 * with put-if-absent semantics and read back; the metadata side first, so a racer that sees the blob
 * store's id also sees the database's). Without a conditional write in the blob driver, two
 * DIFFERENT deployments stamping the same empty blob store within the same moment may both pass
 * once; the later start of one of them then refuses.
 */
export async function bindBlobStore(
  store: Store,
  blobs: BlobDriver,
  where: StorageLocations,
): Promise<string> {
  const refuse = (why: string): never => {
    throw new BlobStoreMismatchError(
      `blob store ${where.blobStore} does not belong to database ${where.database}: ${why}; nothing was changed (use the blob store of this database, or the database of this blob store)`,
    );
  };
  // Blob side first: a concurrent starter writes the database's id before the blob store's.
  const blobStoreId = await readStamp(blobs, refuse);
  const storeId = await store.settings.get(STORE_ID_SETTING);
  if (blobStoreId !== undefined) {
    if (storeId === blobStoreId) return storeId;
    return refuse(
      storeId === undefined
        ? `the blob store belongs to the deployment ${blobStoreId} and the database has no id`
        : `the blob store belongs to the deployment ${blobStoreId}, the database to ${storeId}`,
    );
  }
  const bound = storeId !== undefined && (await store.settings.get(BLOB_STORE_BOUND_SETTING)) !== undefined;
  if (bound) {
    // Another server of this deployment may have stamped a shared blob store since the first read.
    const again = await readStamp(blobs, refuse);
    if (again === storeId) return storeId;
    if (again !== undefined)
      return refuse(`the blob store belongs to the deployment ${again}, the database to ${storeId}`);
  }
  const holds = await holdsBlobs(blobs);
  const records = await store.blobs.anyRecorded();
  if (bound && holds) {
    return refuse(`the database (${storeId}) is bound to another blob store; this one holds blobs but no id`);
  }
  if (holds && !records) return refuse("the blob store holds blobs the database has no record of");
  if (!holds && records) {
    return refuse(
      "the database records blobs but the blob store holds none (a wrong location, or lost blobs)",
    );
  }
  if (!bound && holds) {
    // Both hold blobs and neither has (a bound) id: a deployment from before ids, unless the two
    // are different deployments. Their blobs would then mostly be unknown to the database.
    const { sampled, known } = await sampleKnownBlobs(store, blobs);
    if (known * 2 < sampled) {
      return refuse(`of ${sampled} blobs sampled in the blob store the database knows only ${known}`);
    }
  }
  const id = await store.settings.putIfAbsent(STORE_ID_SETTING, storeId ?? randomBytes(16).toString("hex"));
  const stamped = await stampIfAbsent(blobs, id, refuse);
  if (stamped !== id)
    return refuse(`the blob store belongs to the deployment ${stamped}, the database to ${id}`);
  await store.settings.putIfAbsent(BLOB_STORE_BOUND_SETTING, id);
  return id;
}

/** The id stamped in `blobs`, or undefined when there is none; refuses an unreadable stamp. */
async function readStamp(blobs: BlobDriver, refuse: (why: string) => never): Promise<string | undefined> {
  const stat = await blobs.stat(BLOB_STORE_ID_KEY);
  if (stat === undefined) return undefined;
  if (stat.size > MAX_STAMP_BYTES) return refuse(`its ${BLOB_STORE_ID_KEY} object is not a Wharf store id`);
  const value = (await text(await blobs.read(BLOB_STORE_ID_KEY, { start: 0, end: MAX_STAMP_BYTES }))).trim();
  if (!STORE_ID.test(value)) return refuse(`its ${BLOB_STORE_ID_KEY} object is not a Wharf store id`);
  return value;
}

/** Writes `id` into `blobs` unless a stamp is there already; resolves with the stamp now stored. */
async function stampIfAbsent(blobs: BlobDriver, id: string, refuse: (why: string) => never): Promise<string> {
  if ((await readStamp(blobs, refuse)) === undefined) {
    await blobs.put(BLOB_STORE_ID_KEY, Readable.from([Buffer.from(`${id}\n`)]));
  }
  const stored = await readStamp(blobs, refuse);
  if (stored === undefined) throw new Error(`${BLOB_STORE_ID_KEY} vanished after it was written`);
  return stored;
}

/** How many blobs a first binding samples to tell a pre-id deployment from a foreign blob store. */
const SAMPLE_SIZE = 64;

/**
 * How many of the first {@link SAMPLE_SIZE} objects under `blobs/` (in key order, so effectively
 * random digests) the database records. An object whose key is no blob's counts as unknown.
 */
async function sampleKnownBlobs(
  store: Store,
  blobs: BlobDriver,
): Promise<{ sampled: number; known: number }> {
  let sampled = 0;
  let known = 0;
  for await (const object of blobs.list(BLOBS_PREFIX)) {
    const address = parseBlobKey(object.key);
    sampled++;
    if (
      address !== undefined &&
      (await store.blobs.get(`${address.algorithm}:${address.hex}`)) !== undefined
    ) {
      known++;
    }
    if (sampled === SAMPLE_SIZE) break;
  }
  return { sampled, known };
}

/** Whether `blobs` holds any blob bytes (objects under `blobs/`). */
async function holdsBlobs(blobs: BlobDriver): Promise<boolean> {
  for await (const _ of blobs.list(BLOBS_PREFIX)) return true;
  return false;
}
