import { randomBytes } from "node:crypto";

// Where Wharf keeps what in blob storage: every key it reads, writes, lists or deletes through a
// `BlobDriver` is built here, and every key it finds in a listing is parsed here.
//
//   blobs/<algorithm>/<xx>/<hex>   a blob's bytes (<xx>: the first two hex characters)
//   uploads/<id>                   the bytes an upload session has received so far
//   wharf-store-id                 the id of the metadata store this blob store belongs to
//   health/probe                   the object the readiness check looks for
//
// Garbage collection lists only `blobs/` and `uploads/`, and considers only the objects there that
// parseBlobKey or parseUploadKey accept: anything else, the two single objects above included, is
// foreign and never removed.

/** The prefix of every blob's key (what garbage collection and the store binding list). */
export const BLOBS_PREFIX = "blobs/";

/** The prefix of every upload session's key (what garbage collection lists for stray uploads). */
export const UPLOADS_PREFIX = "uploads/";

/**
 * The object holding the id of the metadata store a blob store belongs to: a top-level key, outside
 * both swept prefixes.
 */
export const BLOB_STORE_ID_KEY = "wharf-store-id";

/**
 * The object the readiness check stats, written when the server starts: outside both swept
 * prefixes, so garbage collection never takes it for a stray object.
 */
export const BLOB_PROBE_KEY = "health/probe";

/**
 * What addresses a blob's bytes: its digest's algorithm (`sha256`) and lowercase hex. A registry
 * `Digest` is one; this module stays below the registry and needs no more than these two strings.
 */
export interface BlobAddress {
  algorithm: string;
  hex: string;
}

const BLOB_KEY = /^blobs\/([a-z0-9]+)\/([0-9a-f]{2})\/([0-9a-f]{2,})$/;
const UPLOAD_ID = /^[0-9a-f]{32}$/;

/**
 * The key of the blob `address`: `blobs/<algorithm>/<first two hex>/<hex>`. The caller passes a
 * validated digest (lowercase `[a-z0-9]` algorithm, lowercase hex of at least two characters);
 * {@link parseBlobKey} inverts it.
 */
export function blobKey(address: BlobAddress): string {
  return `${BLOBS_PREFIX}${address.algorithm}/${address.hex.slice(0, 2)}/${address.hex}`;
}

/**
 * The blob a key holds, or `undefined` when `key` is not exactly what {@link blobKey} builds (a
 * foreign object: another segment count, upper-case hex, a fan-out directory that does not match
 * the hex, …). Says nothing about whether the algorithm is one the registry supports.
 */
export function parseBlobKey(key: string): BlobAddress | undefined {
  const match = BLOB_KEY.exec(key);
  if (match === null) return undefined;
  const [, algorithm, fanOut, hex] = match as unknown as [string, string, string, string];
  return hex.startsWith(fanOut) ? { algorithm, hex } : undefined;
}

/** A new upload session id: 16 random bytes as 32 lowercase hex characters. */
export function newUploadId(): string {
  return randomBytes(16).toString("hex");
}

/** Whether `id` has the form {@link newUploadId} gives (32 lowercase hex characters). */
export function isUploadId(id: string): boolean {
  return UPLOAD_ID.test(id);
}

/** The key holding the bytes of upload session `id` (one that {@link isUploadId} accepts): `uploads/<id>`. */
export function uploadKey(id: string): string {
  return `${UPLOADS_PREFIX}${id}`;
}

/**
 * The upload session id a key holds the bytes of, or `undefined` when `key` is not exactly
 * `uploads/<id>` with an id {@link isUploadId} accepts (a foreign object).
 */
export function parseUploadKey(key: string): string | undefined {
  if (!key.startsWith(UPLOADS_PREFIX)) return undefined;
  const id = key.slice(UPLOADS_PREFIX.length);
  return isUploadId(id) ? id : undefined;
}
