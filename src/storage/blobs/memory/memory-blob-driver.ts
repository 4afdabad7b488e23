import { Readable, type Writable } from "node:stream";
import {
  type BlobDriver,
  type BlobExpectation,
  type BlobListEntry,
  BlobNotFoundError,
  type BlobRange,
  type BlobStat,
  checkBlobSize,
  pipeThroughRead,
  resolveBlobRange,
} from "../blob-driver.js";
import { validatingBlobDriver } from "../validating-blob-driver.js";

/** One stored object: its bytes as the chunks they arrived in (never copied into one buffer). */
interface MemoryObject {
  chunks: Buffer[];
  size: number;
  modifiedTime: number;
}

/**
 * A {@link BlobDriver} keeping objects in this process's memory (tests, throwaway servers). Objects
 * are lost on exit and, unlike the other drivers, are held whole in memory. `put` and `append`
 * collect the source and make it visible only when it ended, so a failing source changes nothing.
 * Streams returned by `read` are snapshots: later writes do not affect them. Arguments are checked
 * by {@link validatingBlobDriver} before they reach it.
 */
export function createMemoryBlobDriver(): BlobDriver {
  return validatingBlobDriver(new MemoryBlobDriver());
}

/** Stores bytes only: its arguments were checked by the wrapper {@link createMemoryBlobDriver} adds. */
class MemoryBlobDriver implements BlobDriver {
  readonly kind = "memory";
  readonly #objects = new Map<string, MemoryObject>();

  async stat(key: string): Promise<BlobStat | undefined> {
    const object = this.#objects.get(key);
    return object === undefined ? undefined : { size: object.size, modifiedTime: object.modifiedTime };
  }

  pipeTo(key: string, sink: Writable, range?: BlobRange, expect?: BlobExpectation): Promise<void> {
    return pipeThroughRead(this, key, sink, range, expect);
  }

  async read(key: string, range?: BlobRange, expect?: BlobExpectation): Promise<Readable> {
    const object = this.#objects.get(key);
    if (object === undefined) throw new BlobNotFoundError(key);
    checkBlobSize(key, object.size, expect);
    const { start, end } = resolveBlobRange(key, object.size, range);
    return Readable.from(slices([...object.chunks], start, end), { objectMode: false });
  }

  async put(key: string, source: Readable): Promise<number> {
    const { chunks, size } = await collect(source);
    this.#objects.set(key, { chunks, size, modifiedTime: Date.now() });
    return size;
  }

  async append(key: string, source: Readable): Promise<number> {
    const { chunks, size } = await collect(source);
    const object = this.#objects.get(key) ?? { chunks: [], size: 0, modifiedTime: 0 };
    const next = {
      chunks: [...object.chunks, ...chunks],
      size: object.size + size,
      modifiedTime: Date.now(),
    };
    this.#objects.set(key, next);
    return next.size;
  }

  async commit(from: string, to: string): Promise<void> {
    const object = this.#objects.get(from);
    if (object === undefined) throw new BlobNotFoundError(from);
    this.#objects.set(to, object);
    this.#objects.delete(from);
  }

  async delete(key: string): Promise<void> {
    this.#objects.delete(key);
  }

  list(prefix: string): AsyncIterable<BlobListEntry> {
    return this.#list(prefix);
  }

  async close(): Promise<void> {}

  async *#list(prefix: string): AsyncGenerator<BlobListEntry> {
    const keys = [...this.#objects.keys()].filter((k) => k.startsWith(prefix)).sort();
    for (const key of keys) {
      const object = this.#objects.get(key);
      if (object !== undefined) yield { key, size: object.size, modifiedTime: object.modifiedTime };
    }
  }
}

/** Reads `source` to its end; rejects (after destroying it) if it fails. */
async function collect(source: Readable): Promise<{ chunks: Buffer[]; size: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of source) {
      const buffer = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
      chunks.push(buffer);
      size += buffer.length;
    }
  } catch (err) {
    source.destroy();
    throw err;
  }
  return { chunks, size };
}

/** The parts of `chunks` covering bytes `[start, end)`. */
function* slices(chunks: Buffer[], start: number, end: number): Generator<Buffer> {
  let offset = 0;
  for (const chunk of chunks) {
    const from = Math.max(start - offset, 0);
    const to = Math.min(end - offset, chunk.length);
    if (from < to) yield chunk.subarray(from, to);
    offset += chunk.length;
    if (offset >= end) return;
  }
}
