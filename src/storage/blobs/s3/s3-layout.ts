import { type BlobListEntry, isValidBlobKey, RESERVED_PARTS_SUFFIX } from "../blob-driver.js";

/**
 * How the S3 driver lays out appendable objects: the chunks of logical key `k` are the objects
 * `k.parts/00000001`, `k.parts/00000002`, … (fixed-width decimal, so S3's order is chunk order). A
 * plain object `k`, when present, wins over parts (it is written by `put`/`commit`, which then delete
 * the parts). `.parts` segments are reserved in every key (see `assertValidBlobKey`).
 */
export const PART_DIGITS = 8;

/** The largest chunk number (`append` calls per object). */
export const MAX_PART_NUMBER = 10 ** PART_DIGITS - 1;

/** The prefix under which the chunks of `key` (a root-relative or full S3 key) are stored. */
export function partsPrefix(key: string): string {
  return `${key}${RESERVED_PARTS_SUFFIX}/`;
}

/** The S3 key of chunk `n` (1-based) of `key`. */
export function partKey(key: string, n: number): string {
  return partsPrefix(key) + String(n).padStart(PART_DIGITS, "0");
}

const PART_KEY = new RegExp(`^(.+)\\${RESERVED_PARTS_SUFFIX}/(\\d{${PART_DIGITS}})$`);

/** The logical key and chunk number of a chunk's S3 key, or undefined when `key` is no chunk. */
export function parsePartKey(key: string): { key: string; number: number } | undefined {
  const m = PART_KEY.exec(key);
  return m === null ? undefined : { key: m[1]!, number: Number(m[2]) };
}

/** One object of a raw S3 listing, its key relative to the driver's prefix. */
export interface RawObject {
  key: string;
  size: number;
  modifiedTime: number;
}

/**
 * Turns a raw listing (pages in S3 order: ascending UTF-8 bytes) into logical entries in ascending
 * key order: chunks summed into their logical key (size = total, mtime = latest; a plain object of the
 * same key wins), foreign objects (keys no valid blob key maps to) and keys not starting with `prefix`
 * dropped. Each page is also sorted locally, which makes backends that return a page out of order
 * (s3rver) work as long as the pages themselves follow each other in order.
 *
 * Streaming, with a small buffer: logical key `L` is listed at the raw position of `L.parts/…`, which
 * can come after raw keys greater than `L` (`L-x` < `L.parts/1`). After raw key `s`, the only logical
 * keys still to come that sort below `s` are prefixes `s[0:i]` where `s[i]` sorts at or before `.`
 * (see {@link emitBound}), so every buffered key below that bound is final and emitted.
 */
export async function* mergeListing(
  pages: AsyncIterable<RawObject[]>,
  prefix: string,
): AsyncGenerator<BlobListEntry> {
  const pending = new Map<string, BlobListEntry & { plain: boolean }>();
  for await (const page of pages) {
    for (const raw of [...page].sort((a, b) => compare(a.key, b.key))) {
      const part = parsePartKey(raw.key);
      const key = part?.key ?? raw.key;
      if (key.startsWith(prefix) && isValidBlobKey(key)) {
        const entry = pending.get(key);
        if (part === undefined) {
          pending.set(key, { key, size: raw.size, modifiedTime: raw.modifiedTime, plain: true });
        } else if (entry === undefined) {
          pending.set(key, { key, size: raw.size, modifiedTime: raw.modifiedTime, plain: false });
        } else if (!entry.plain) {
          entry.size += raw.size;
          entry.modifiedTime = Math.max(entry.modifiedTime, raw.modifiedTime);
        }
      }
      yield* drain(pending, emitBound(raw.key, prefix.length));
    }
  }
  yield* drain(pending, undefined);
}

/**
 * A lower bound of the logical keys that raw keys after `raw` (in S3 order) can still produce: the
 * shortest prefix `raw[0:i]` (i ≥ `from`) that could be a logical key whose `.parts/` sorts after
 * `raw` (`raw[i]` below `.`, or `raw[i:]` at most `.parts/`), else `raw` itself.
 */
export function emitBound(raw: string, from: number): string {
  const marker = `${RESERVED_PARTS_SUFFIX}/`;
  for (let i = from; i < raw.length; i++) {
    const c = raw[i]!;
    if (c < "." || (c === "." && raw.slice(i, i + marker.length) <= marker)) return raw.slice(0, i);
  }
  return raw;
}

function* drain(
  pending: Map<string, BlobListEntry & { plain: boolean }>,
  bound: string | undefined,
): Generator<BlobListEntry> {
  const ready = [...pending.keys()].filter((k) => bound === undefined || k < bound).sort(compare);
  for (const key of ready) {
    const { size, modifiedTime } = pending.get(key)!;
    pending.delete(key);
    yield { key, size, modifiedTime };
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
