import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { setImmediate as tick } from "node:timers/promises";
import type { BlobDriver, BlobListEntry } from "../../../src/storage/blobs/blob-driver.js";

/** A byte stream of `chunks` (strings are UTF-8), one chunk per read. */
export function streamOf(...chunks: (Buffer | string)[]): Readable {
  return Readable.from(
    chunks.map((c) => (typeof c === "string" ? Buffer.from(c) : c)),
    { objectMode: false },
  );
}

/** The error {@link failingStream} fails with. */
export const SOURCE_FAILURE = "test source failed on purpose";

/** A byte stream that yields `chunks` (letting the consumer run in between), then errors. */
export function failingStream(...chunks: Buffer[]): Readable {
  async function* generate(): AsyncGenerator<Buffer> {
    for (const chunk of chunks) {
      yield chunk;
      await tick();
    }
    throw new Error(SOURCE_FAILURE);
  }
  return Readable.from(generate(), { objectMode: false });
}

/** Every byte of `stream`. */
export async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

/** `driver.read(key, range)` read to the end. */
export async function readBytes(
  driver: BlobDriver,
  key: string,
  range?: { start: number; end?: number },
): Promise<Buffer> {
  return readAll(await driver.read(key, range));
}

/** Every entry `driver.list(prefix)` yields. */
export async function listAll(driver: BlobDriver, prefix: string): Promise<BlobListEntry[]> {
  const entries: BlobListEntry[] = [];
  for await (const entry of driver.list(prefix)) entries.push(entry);
  return entries;
}

/** The keys `driver.list(prefix)` yields. */
export async function listKeys(driver: BlobDriver, prefix: string): Promise<string[]> {
  return (await listAll(driver, prefix)).map((e) => e.key);
}

/** `n` bytes covering every byte value, deterministic for `seed`. */
export function bytes(n: number, seed = 0): Buffer {
  const out = Buffer.alloc(n);
  for (let i = 0; i < n; i++) out[i] = (i * 7 + seed * 13 + (i >> 8)) & 0xff;
  return out;
}

/** Hex SHA-256 of everything `stream` yields. */
export async function sha256Of(stream: NodeJS.ReadableStream): Promise<string> {
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of stream) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return `${hash.digest("hex")}:${size}`;
}

/**
 * A large pseudo-random payload, generated as a stream (never held whole): byte `i` is
 * `pattern[i % pattern.length]` with a pattern of 1 MiB + 7 random bytes, so chunk and part
 * boundaries never line up with it.
 */
export class BigPayload {
  readonly #pattern: Buffer;
  constructor(readonly size: number) {
    this.#pattern = Buffer.alloc(1024 * 1024 + 7);
    for (let i = 0; i < this.#pattern.length; i++) this.#pattern[i] = (i * 2654435761) >>> 24;
  }

  /** Bytes `[start, end)` as a stream of `chunkSize`-byte chunks. */
  stream(chunkSize = 65_537, start = 0, end = this.size): Readable {
    const pattern = this.#pattern;
    async function* generate(): AsyncGenerator<Buffer> {
      for (let at = start; at < end; at += chunkSize) {
        const length = Math.min(chunkSize, end - at);
        const chunk = Buffer.allocUnsafe(length);
        let filled = 0;
        while (filled < length) {
          const offset = (at + filled) % pattern.length;
          filled += pattern.copy(
            chunk,
            filled,
            offset,
            offset + Math.min(length - filled, pattern.length - offset),
          );
        }
        yield chunk;
      }
    }
    return Readable.from(generate(), { objectMode: false });
  }

  /** {@link sha256Of} of bytes `[start, end)`. */
  digest(start = 0, end = this.size): Promise<string> {
    return sha256Of(this.stream(1024 * 1024, start, end));
  }
}
