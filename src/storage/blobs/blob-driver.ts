import type { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";

/**
 * Size and modification time of a stored object.
 *
 * `modifiedTime` is milliseconds since the Unix epoch, as an integer. Its precision is the backend's:
 * the filesystem's mtime (truncated to ms), S3's Last-Modified (whole seconds), the memory driver's
 * clock. For an appendable object it is the time of its latest append.
 */
export interface BlobStat {
  size: number;
  modifiedTime: number;
}

/** One object of a listing: its logical key and its stat. */
export interface BlobListEntry extends BlobStat {
  key: string;
}

/**
 * A byte range of an object: `start` inclusive, `end` EXCLUSIVE (defaults to the object's size).
 *
 * - `start` and `end` must be non-negative safe integers and `end >= start`, else `read` rejects
 *   with a plain `RangeError` before any I/O.
 * - `end` beyond the size is clamped to the size (like HTTP byte ranges).
 * - `start === end`, or `start === size`, gives an empty stream.
 * - `start > size` rejects with {@link BlobRangeError} (carries the size, for HTTP 416).
 */
export interface BlobRange {
  start: number;
  end?: number;
}

/**
 * What a reader knows of the object it reads: `size`, the size its metadata records. A read given
 * one compares it with the stored object's size before any byte is handed out and rejects with
 * {@link BlobSizeMismatchError} when they differ (a truncated, extended or replaced object).
 * `size` must be a non-negative safe integer, else `read`/`pipeTo` reject with a plain `RangeError`.
 */
export interface BlobExpectation {
  size: number;
}

/**
 * The blob storage seam: a flat namespace of byte objects addressed by keys.
 *
 * Keys are slash-separated relative paths (`blobs/sha256/ab/abcdef…`, `uploads/<id>`; which keys
 * Wharf uses is `blob-layout.ts`'s business); see {@link assertValidBlobKey} for the exact rules.
 * Every method given an invalid key rejects with a `TypeError` (`list` throws it synchronously)
 * before doing any I/O. Drivers get that, and every other argument check below, from
 * `validatingBlobDriver`, which each driver's factory wraps around it: an implementation only
 * stores bytes and may assume its arguments valid.
 *
 * A key holds one object, written either whole (`put`, `commit`) or piecewise (`append`). Both kinds
 * are read, stat'ed, listed, committed and deleted alike. A key should not also be a directory-like
 * prefix of another key (`a` and `a/b`): the filesystem cannot hold both, so behaviour then is
 * driver-specific.
 *
 * Concurrency: reads never observe a partially `put` or `commit`ted object. Concurrent `append`s to
 * the same key, or an `append` concurrent with `commit`/`delete` of that key, are not supported: the
 * caller (upload sessions) serializes them. A stream returned by `read` is a snapshot of the bytes
 * that existed when `read` resolved, except that it may fail (not return other bytes) if the object is
 * deleted or replaced while being streamed from S3.
 */
export interface BlobDriver {
  /** Which backend this is. */
  readonly kind: "filesystem" | "s3" | "memory";

  /**
   * Size and modification time of the object at `key` (plain or appendable), or `undefined` when
   * there is none. Never throws for a missing key.
   */
  stat(key: string): Promise<BlobStat | undefined>;

  /**
   * Streams bytes `[range.start, range.end)` of the object at `key` (the whole object without
   * `range`); see {@link BlobRange} for validation, clamping and the empty and out-of-range cases.
   * Works for appendable objects. Rejects with {@link BlobNotFoundError} when there is no object,
   * and with {@link BlobSizeMismatchError} when `expect` is given and the object's size is not
   * `expect.size` (checked before the stream is returned, on the object the stream reads).
   * The caller must consume or destroy the returned stream (it holds a file handle or a connection).
   */
  read(key: string, range?: BlobRange, expect?: BlobExpectation): Promise<Readable>;

  /**
   * Writes bytes `[range.start, range.end)` of the object at `key` (the whole object without `range`)
   * to `sink`, then ends it; resolves once `sink` has finished. Same validation, clamping and errors
   * as {@link read} (a size other than `expect.size` included), and those reject BEFORE anything is
   * written, leaving `sink` untouched (so an
   * HTTP handler can still answer an error). A failure after that (a read error, the sink closing
   * before every byte was handed to it) destroys `sink` and rejects; it always settles. Memory stays
   * bounded. Drivers may move the bytes faster than
   * `pipeline(await read(key, range), sink)` (the filesystem driver reuses its read buffers, which a
   * stream handing out chunks cannot).
   */
  pipeTo(key: string, sink: Writable, range?: BlobRange, expect?: BlobExpectation): Promise<void>;

  /**
   * Writes the object at `key` from `source`, ATOMICALLY: readers see the previous object (or none)
   * until the whole new object is visible, never a partial one, even if the process dies mid-write.
   * Replaces any previous object, plain or appendable. Streams with bounded memory (never buffers the
   * whole source; the memory driver necessarily keeps the object itself). Resolves with the number
   * of bytes written.
   *
   * If `source` errors (or is destroyed) before ending, the promise rejects, nothing new becomes
   * visible and temporary data is removed. On any failure `source` is destroyed.
   */
  put(key: string, source: Readable): Promise<number>;

  /**
   * Appends `source` to the object at `key` (creating it, possibly empty, when missing) and resolves
   * with its new total size. One call is one chunk of a resumable upload; appending to an object
   * written by `put` extends it. Not atomic for readers (a concurrent `read`/`stat` may see part of
   * the chunk), but if `source` errors the object keeps its previous size and bytes (or stays
   * missing) and the promise rejects. On any failure `source` is destroyed.
   */
  append(key: string, source: Readable): Promise<number>;

  /**
   * Moves the object at `from` (typically appendable) to `to`: `to` atomically becomes the complete
   * object (replacing any previous one), then `from` is removed. Rejects with
   * {@link BlobNotFoundError} when `from` has no object, and with `TypeError` when `from === to`.
   * If interrupted, `to` may already be complete while `from` still exists; committing again or
   * deleting `from` is safe.
   */
  commit(from: string, to: string): Promise<void>;

  /** Removes the object at `key` (plain or appendable). Resolves normally when there is none. */
  delete(key: string): Promise<void>;

  /**
   * Every object whose key starts with `prefix` (a plain string prefix, so `blobs/sha256/a` matches
   * `blobs/sha256/ab/…`; `""` lists everything), each listed ONCE by its logical key with its stat,
   * in ascending code-unit (= byte, keys being ASCII) order. Internal objects (temporary files, S3
   * append parts) never appear. Objects written or removed during the iteration may or may not be
   * seen. Throws `TypeError` synchronously for an invalid prefix ({@link assertValidBlobPrefix}).
   */
  list(prefix: string): AsyncIterable<BlobListEntry>;

  /** Releases clients and handles. The driver must not be used afterwards. */
  close(): Promise<void>;
}

/** The object a `read` or `commit` needed does not exist. `key` is the missing key. */
export class BlobNotFoundError extends Error {
  override readonly name = "BlobNotFoundError";
  constructor(readonly key: string) {
    super(`blob not found: ${key}`);
  }
}

/**
 * A `read` range starts past the end of the object. `size` is the object's size (what an HTTP 416
 * answer's `Content-Range` needs). Subclass of `RangeError`.
 */
export class BlobRangeError extends RangeError {
  override readonly name = "BlobRangeError";
  constructor(
    readonly key: string,
    readonly start: number,
    readonly size: number,
  ) {
    super(`range start ${start} is past the end of ${key} (size ${size})`);
  }
}

/**
 * The object at `key` is not the size its metadata records (`expectedSize`): it was truncated,
 * extended or replaced behind the registry's back. `storedSize` is what storage holds.
 */
export class BlobSizeMismatchError extends Error {
  override readonly name = "BlobSizeMismatchError";
  constructor(
    readonly key: string,
    readonly expectedSize: number,
    readonly storedSize: number,
  ) {
    super(`blob ${key} holds ${storedSize} bytes, its record says ${expectedSize}`);
  }
}

/** Throws {@link BlobSizeMismatchError} when `expect` is given and `size` is not `expect.size`. */
export function checkBlobSize(key: string, size: number, expect: BlobExpectation | undefined): void {
  if (expect !== undefined && size !== expect.size) throw new BlobSizeMismatchError(key, expect.size, size);
}

/**
 * Throws a plain `RangeError` unless `expect` is absent or its `size` is a non-negative safe
 * integer. `validatingBlobDriver` calls it before any I/O.
 */
export function assertValidBlobExpectation(expect: BlobExpectation | undefined): void {
  if (expect === undefined) return;
  if (!Number.isSafeInteger(expect.size) || expect.size < 0) {
    throw new RangeError(`expected size must be a non-negative integer, got ${expect.size}`);
  }
}

/** Characters allowed in a key segment: RFC 3986 "unreserved" (safe in paths, URLs and S3 keys). */
const SEGMENT = /^[A-Za-z0-9._~-]+$/;
/** Longest key (S3 caps keys at 1024 bytes, including the driver's prefix). */
export const MAX_BLOB_KEY_LENGTH = 900;
/**
 * Longest key segment: a file name (255 bytes on Linux) minus room for backends' own suffixes
 * (s3rver stores segment `s` as the file `s._S3rver_metadata.json`).
 */
export const MAX_BLOB_SEGMENT_LENGTH = 200;
/** The filesystem driver's temporary directory, reserved as a first segment in every driver. */
export const RESERVED_TEMP_SEGMENT = "_tmp";
/** Suffix reserved for the S3 driver's append parts (`<key>.parts/00000001`), in every driver. */
export const RESERVED_PARTS_SUFFIX = ".parts";

/**
 * Throws `TypeError` unless `key` is a valid blob key: 1–{@link MAX_BLOB_KEY_LENGTH} characters,
 * segments separated by single `/` (so no leading or trailing slash and no empty segment), each
 * segment 1–200 characters of `A–Z a–z 0–9 . _ ~ -`, not `.` or `..` (no backslashes, spaces or
 * non-ASCII); the first segment is not `_tmp` and no segment ends with `.parts` (both reserved for
 * driver internals, in every driver so keys stay portable).
 */
export function assertValidBlobKey(key: string): void {
  if (typeof key !== "string" || key.length === 0) throw new TypeError("blob key must be a non-empty string");
  if (key.length > MAX_BLOB_KEY_LENGTH) {
    throw new TypeError(`blob key longer than ${MAX_BLOB_KEY_LENGTH} characters`);
  }
  for (const [i, segment] of key.split("/").entries()) checkSegment(key, segment, i, true);
}

/** Whether `key` is a valid blob key ({@link assertValidBlobKey} would not throw). */
export function isValidBlobKey(key: string): boolean {
  try {
    assertValidBlobKey(key);
    return true;
  } catch {
    return false;
  }
}

/**
 * Throws `TypeError` unless `prefix` is a valid listing prefix: `""`, or a string that a valid key
 * could start with (complete segments follow the key rules; the last, possibly partial or empty after
 * a trailing `/`, only needs allowed characters).
 */
export function assertValidBlobPrefix(prefix: string): void {
  if (typeof prefix !== "string") throw new TypeError("blob prefix must be a string");
  if (prefix === "") return;
  if (prefix.length > MAX_BLOB_KEY_LENGTH) {
    throw new TypeError(`blob prefix longer than ${MAX_BLOB_KEY_LENGTH} characters`);
  }
  const segments = prefix.split("/");
  const last = segments.pop() ?? "";
  for (const [i, segment] of segments.entries()) checkSegment(prefix, segment, i, true);
  if (last !== "") checkSegment(prefix, last, segments.length, false);
}

function checkSegment(key: string, segment: string, index: number, complete: boolean): void {
  const what = `invalid blob key ${JSON.stringify(key)}`;
  if (segment === "") throw new TypeError(`${what}: empty segment (leading, trailing or double slash)`);
  if (!SEGMENT.test(segment)) {
    throw new TypeError(`${what}: segments may only contain A-Z a-z 0-9 . _ ~ -`);
  }
  if (segment.length > MAX_BLOB_SEGMENT_LENGTH) {
    throw new TypeError(`${what}: segment longer than ${MAX_BLOB_SEGMENT_LENGTH} characters`);
  }
  if (!complete) return;
  if (segment === "." || segment === "..")
    throw new TypeError(`${what}: "." and ".." segments are not allowed`);
  if (index === 0 && segment === RESERVED_TEMP_SEGMENT) {
    throw new TypeError(`${what}: the first segment "${RESERVED_TEMP_SEGMENT}" is reserved`);
  }
  if (segment.endsWith(RESERVED_PARTS_SUFFIX)) {
    throw new TypeError(`${what}: segments ending in "${RESERVED_PARTS_SUFFIX}" are reserved`);
  }
}

/**
 * Throws a plain `RangeError` unless `range` is well-formed (see {@link BlobRange}); does not need
 * the object's size. `validatingBlobDriver` calls it before any I/O.
 */
export function assertValidBlobRange(range: BlobRange | undefined): void {
  if (range === undefined) return;
  const { start, end } = range;
  if (!Number.isSafeInteger(start) || start < 0) {
    throw new RangeError(`range start must be a non-negative integer, got ${start}`);
  }
  if (end !== undefined && (!Number.isSafeInteger(end) || end < start)) {
    throw new RangeError(`range end must be an integer >= start (${start}), got ${end}`);
  }
}

/**
 * The concrete `[start, end)` (end exclusive) of `range` on an object of `size` bytes: `end` clamped
 * to `size`. Throws {@link BlobRangeError} when `start > size`. Assumes {@link assertValidBlobRange}.
 */
export function resolveBlobRange(
  key: string,
  size: number,
  range: BlobRange | undefined,
): { start: number; end: number } {
  if (range === undefined) return { start: 0, end: size };
  if (range.start > size) throw new BlobRangeError(key, range.start, size);
  return { start: range.start, end: Math.min(range.end ?? size, size) };
}

/** {@link BlobDriver.pipeTo} through {@link BlobDriver.read}, for drivers without a faster way. */
export async function pipeThroughRead(
  driver: BlobDriver,
  key: string,
  sink: Writable,
  range?: BlobRange,
  expect?: BlobExpectation,
): Promise<void> {
  const source = await driver.read(key, range, expect);
  await pipeline(source, sink);
}
