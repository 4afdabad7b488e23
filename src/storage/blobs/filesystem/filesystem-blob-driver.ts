import { randomUUID } from "node:crypto";
import { fdatasync, WriteStream, writev } from "node:fs";
import { type FileHandle, mkdir, open, readdir, rename, rm, rmdir, stat, unlink } from "node:fs/promises";
import { OutgoingMessage } from "node:http";
import { Socket } from "node:net";
import { dirname, join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import {
  type BlobDriver,
  type BlobExpectation,
  type BlobListEntry,
  BlobNotFoundError,
  type BlobRange,
  type BlobStat,
  checkBlobSize,
  isValidBlobKey,
  RESERVED_TEMP_SEGMENT,
  resolveBlobRange,
} from "../blob-driver.js";
import { validatingBlobDriver } from "../validating-blob-driver.js";

/** Options of {@link createFilesystemBlobDriver}. */
export interface FilesystemBlobDriverOptions {
  /** Directory holding the objects (created when missing): key `a/b` is the file `<root>/a/b`. */
  root: string;
  /**
   * fsync a `put` temp file before renaming it into place, and an `append`ed file after each chunk,
   * so a completed write survives a power loss (default true; CNCF distribution does the same).
   */
  fsync?: boolean;
  /**
   * Temp files older than this (ms, by mtime) are removed by the sweep that runs before this
   * driver's first write (default 24 h). Temps of writes in progress are touched on every write, so
   * they stay younger than this unless a writer stalls that long. Set 0 only when no other process
   * writes to the same root.
   */
  staleTempAgeMs?: number;
}

/** Read and write buffer size: large so a 1 GiB blob moves in few syscalls. */
const CHUNK = 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;
/** How often a write retries after a concurrent `delete` pruned the directory it needed. */
const PARENT_RETRIES = 5;

/**
 * A {@link BlobDriver} over a local directory.
 *
 * Layout: key `k` is the regular file `<root>/k`; `<root>/_tmp/` holds `put` temp files (same
 * filesystem, so the final `rename` is atomic). A crash mid-`put` leaves only a temp file, never a
 * partial object; the stale-temp sweep removes it later. `append` writes in place (`O_APPEND`) and,
 * when its source fails, truncates the file back to its previous size (or removes a file it
 * created). `commit` is a `rename`. `delete` removes the file and any parent directories it leaves
 * empty (writers recreate directories as needed). Directories are created lazily; nothing is touched
 * until the first call. Arguments are checked by {@link validatingBlobDriver} before they reach it.
 */
export function createFilesystemBlobDriver(options: FilesystemBlobDriverOptions): BlobDriver {
  return validatingBlobDriver(new FilesystemBlobDriver(options));
}

/** Stores bytes only: its arguments were checked by the wrapper {@link createFilesystemBlobDriver} adds. */
class FilesystemBlobDriver implements BlobDriver {
  readonly kind = "filesystem";
  readonly #root: string;
  readonly #tmpDir: string;
  readonly #fsync: boolean;
  readonly #staleTempAgeMs: number;
  #ready: Promise<void> | undefined;

  constructor(options: FilesystemBlobDriverOptions) {
    this.#root = resolve(options.root);
    this.#tmpDir = join(this.#root, RESERVED_TEMP_SEGMENT);
    this.#fsync = options.fsync ?? true;
    this.#staleTempAgeMs = options.staleTempAgeMs ?? DAY_MS;
  }

  async stat(key: string): Promise<BlobStat | undefined> {
    try {
      const st = await stat(this.#path(key));
      return st.isFile() ? { size: st.size, modifiedTime: Math.trunc(st.mtimeMs) } : undefined;
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async read(key: string, range?: BlobRange, expect?: BlobExpectation): Promise<Readable> {
    const { handle, start, end } = await this.#openRange(key, range, expect);
    if (start === end) {
      await handle.close();
      return Readable.from([], { objectMode: false });
    }
    // Owns the handle from here on (closes it on end, error or destroy).
    return handle.createReadStream({ start, end: end - 1, highWaterMark: CHUNK });
  }

  async pipeTo(key: string, sink: Writable, range?: BlobRange, expect?: BlobExpectation): Promise<void> {
    const { handle, start, end } = await this.#openRange(key, range, expect);
    if (!releasesWrittenChunks(sink)) {
      // A sink that may hold on to written chunks (a PassThrough buffers them) gets fresh ones.
      const source =
        start === end
          ? Readable.from([], { objectMode: false })
          : handle.createReadStream({ start, end: end - 1, highWaterMark: CHUNK });
      try {
        await pipeline(source, sink);
      } finally {
        await handle.close().catch(() => {});
      }
      return;
    }
    try {
      await copyRange(handle, start, end, sink);
    } catch (err) {
      sink.destroy();
      throw err;
    } finally {
      await handle.close().catch(() => {});
    }
  }

  /**
   * Opens `key` for reading, checks its size against `expect` and resolves `range` against it; the
   * caller closes the handle. The size is the open file's (fstat), so it is the one the bytes come
   * from: blob files are replaced by rename, never rewritten in place.
   */
  async #openRange(
    key: string,
    range: BlobRange | undefined,
    expect?: BlobExpectation,
  ): Promise<{ handle: FileHandle; start: number; end: number }> {
    let handle: FileHandle;
    try {
      handle = await open(this.#path(key), "r");
    } catch (err) {
      if (isMissing(err) || code(err) === "EISDIR") throw new BlobNotFoundError(key);
      throw err;
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw new BlobNotFoundError(key);
      checkBlobSize(key, st.size, expect);
      return { handle, ...resolveBlobRange(key, st.size, range) };
    } catch (err) {
      await handle.close().catch(() => {});
      throw err;
    }
  }

  async put(key: string, source: Readable): Promise<number> {
    const target = this.#path(key);
    const temp = join(this.#tmpDir, randomUUID());
    let handle: FileHandle | undefined;
    try {
      await this.#prepare();
      handle = await withParent(temp, () => open(temp, "wx"));
      const written = await writeAll(source, handle, this.#fsync);
      if (this.#fsync) await handle.sync();
      await handle.close();
      handle = undefined;
      await withParent(target, () => rename(temp, target));
      return written;
    } catch (err) {
      source.destroy();
      await handle?.close().catch(() => {});
      await rm(temp, { force: true }).catch(() => {});
      throw err;
    }
  }

  async append(key: string, source: Readable): Promise<number> {
    const path = this.#path(key);
    let handle: FileHandle | undefined;
    let created = false;
    let previous = 0;
    try {
      await this.#prepare();
      try {
        handle = await withParent(path, () => open(path, "ax"));
        created = true;
      } catch (err) {
        if (code(err) !== "EEXIST") throw err;
        handle = await open(path, "a");
        previous = (await handle.stat()).size;
      }
      const written = await writeAll(source, handle, this.#fsync);
      if (this.#fsync) await handle.sync();
      await handle.close();
      handle = undefined;
      return previous + written;
    } catch (err) {
      source.destroy();
      if (handle !== undefined) {
        // Undo the partial chunk; the caller gets the original error either way.
        if (created) await rm(path, { force: true }).catch(() => {});
        else await handle.truncate(previous).catch(() => {});
        await handle.close().catch(() => {});
        if (created) await this.#prune(dirname(path));
      }
      throw err;
    }
  }

  async commit(from: string, to: string): Promise<void> {
    const source = this.#path(from);
    const target = this.#path(to);
    const st = await stat(source).catch((err) => {
      if (isMissing(err)) return undefined;
      throw err;
    });
    if (st === undefined || !st.isFile()) throw new BlobNotFoundError(from);
    try {
      await withParent(target, () => rename(source, target));
    } catch (err) {
      if (code(err) === "ENOENT" && (await this.stat(from)) === undefined) throw new BlobNotFoundError(from);
      throw err;
    }
    await this.#prune(dirname(source));
  }

  async delete(key: string): Promise<void> {
    const path = this.#path(key);
    try {
      await unlink(path);
    } catch (err) {
      if (isMissing(err) || code(err) === "EISDIR") return;
      throw err;
    }
    await this.#prune(dirname(path));
  }

  list(prefix: string): AsyncIterable<BlobListEntry> {
    const slash = prefix.lastIndexOf("/");
    return this.#walk(prefix.slice(0, slash + 1), prefix.slice(slash + 1));
  }

  async close(): Promise<void> {
    await this.#ready?.catch(() => {});
  }

  #path(key: string): string {
    return join(this.#root, key);
  }

  /** Lists directory `dirKey` (`""` or ending in `/`) recursively, in key order. */
  async *#walk(dirKey: string, namePrefix: string): AsyncGenerator<BlobListEntry> {
    let entries: import("node:fs").Dirent[];
    try {
      entries = await readdir(join(this.#root, dirKey), { withFileTypes: true });
    } catch (err) {
      if (isMissing(err)) return;
      throw err;
    }
    // A directory's keys all start with "<name>/", so it sorts as "<name>/" among its siblings.
    const items = entries
      .filter((e) => e.name.startsWith(namePrefix) && (e.isFile() || e.isDirectory()))
      .filter((e) => isValidBlobKey(dirKey + e.name)) // skips _tmp/ and foreign names (lost+found)
      .map((e) => ({ name: e.name, dir: e.isDirectory(), order: e.isDirectory() ? `${e.name}/` : e.name }))
      .sort((a, b) => (a.order < b.order ? -1 : a.order > b.order ? 1 : 0));
    for (const item of items) {
      const key = dirKey + item.name;
      if (item.dir) {
        yield* this.#walk(`${key}/`, "");
        continue;
      }
      const st = await this.stat(key);
      if (st !== undefined) yield { key, ...st };
    }
  }

  /** Creates `_tmp` and sweeps stale temps, once (retried after a failure). */
  #prepare(): Promise<void> {
    this.#ready ??= this.#sweep().catch((err) => {
      this.#ready = undefined;
      throw err;
    });
    return this.#ready;
  }

  async #sweep(): Promise<void> {
    await mkdir(this.#tmpDir, { recursive: true });
    const cutoff = Date.now() - this.#staleTempAgeMs;
    for (const name of await readdir(this.#tmpDir)) {
      const path = join(this.#tmpDir, name);
      const st = await stat(path).catch(() => undefined);
      if (st !== undefined && st.mtimeMs <= cutoff) await rm(path, { force: true, recursive: true });
    }
  }

  /** Removes `dir` and its ancestors below the root while they are empty. */
  async #prune(dir: string): Promise<void> {
    while (dir.startsWith(this.#root) && dir.length > this.#root.length && dir !== this.#tmpDir) {
      try {
        await rmdir(dir);
      } catch {
        return; // not empty (ENOTEMPTY), already gone, or in use: stop
      }
      dir = dirname(dir);
    }
  }
}

/**
 * Whether `sink` is done with a written chunk once its write callback ran, as {@link copyRange}
 * needs: a socket (the kernel has copied the bytes), an HTTP message (it writes to its socket, or
 * holds the chunk and its callback until it does) or a file stream. A Transform calls back as soon
 * as the chunk is queued on its readable side, so it and other Writables get fresh buffers.
 */
function releasesWrittenChunks(sink: Writable): boolean {
  return sink instanceof Socket || sink instanceof OutgoingMessage || sink instanceof WriteStream;
}

/** Read buffers of {@link copyRange}: two, so the next read overlaps the previous write. */
const COPY_BUFFERS = 2;

/**
 * Writes bytes `[start, end)` of the open file to `sink` and ends it. Reads into a few buffers it
 * reuses, each once `sink` has reported the previous write of it done (its write callback: for a
 * socket, the kernel holds the bytes by then), so a transfer allocates nothing per chunk and the
 * file's bytes are copied once into user space, where a read stream allocates a new buffer for
 * every chunk (a quarter of the CPU of a pull at 4 MiB chunks). Rejects when `sink` errors or
 * closes before it finished; the file ending early (truncated meanwhile) is an error too.
 */
async function copyRange(handle: FileHandle, start: number, end: number, sink: Writable): Promise<void> {
  const closed = sinkClosed(sink);
  try {
    const size = Math.min(CHUNK, end - start);
    const buffers = Array.from({ length: end - start > CHUNK ? COPY_BUFFERS : 1 }, () =>
      Buffer.allocUnsafeSlow(size),
    );
    const writes: Promise<void>[] = [];
    let position = start;
    for (let i = 0; position < end; i = (i + 1) % buffers.length) {
      const buffer = buffers[i] as Buffer;
      if (writes[i] !== undefined) await Promise.race([writes[i], closed.promise]);
      const want = Math.min(buffer.length, end - position);
      const { bytesRead } = await handle.read(buffer, 0, want, position);
      if (bytesRead === 0) throw new Error(`file ended at ${position} of ${end} bytes while being read`);
      position += bytesRead;
      const data = bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead);
      writes[i] = new Promise<void>((resolve, reject) => {
        sink.write(data, (err) => (err ? reject(err) : resolve()));
      });
      // An unawaited rejected write would be unhandled; the race above or below sees it.
      writes[i]?.catch(() => {});
    }
    await Promise.race([Promise.all(writes), closed.promise]);
    await Promise.race([new Promise<void>((resolve) => sink.end(resolve)), closed.promise]);
  } finally {
    closed.dispose();
  }
}

/** A promise that rejects when `sink` errors or closes without finishing; `dispose` stops watching. */
function sinkClosed(sink: Writable): { promise: Promise<never>; dispose(): void } {
  let onClose = () => {};
  let onError = (_err: Error) => {};
  const promise = new Promise<never>((_resolve, reject) => {
    onError = (err) => reject(err);
    onClose = () => reject(new Error("the sink closed before the copy finished"));
  });
  promise.catch(() => {});
  sink.once("error", onError);
  sink.once("close", onClose);
  return {
    promise,
    dispose() {
      sink.off("error", onError);
      sink.off("close", onClose);
    },
  };
}

/**
 * Streams `source` into the open file, through a 1 MiB buffer; resolves with the bytes written.
 * With `flush`, starts writing the data back to disk every {@link FLUSH_BYTES} meanwhile (the
 * caller's final fsync is then short). Never returns while a write or flush still uses the
 * descriptor, so the caller may truncate or close it at once.
 */
async function writeAll(source: Readable, handle: FileHandle, flush: boolean): Promise<number> {
  const sink = new FileSink(handle.fd, flush ? FLUSH_BYTES : undefined);
  try {
    await pipeline(source, sink);
  } finally {
    await sink.idle();
  }
  sink.throwIfFlushFailed();
  return sink.bytesWritten;
}

/**
 * Bytes written between background flushes. Linux keeps up to 10% of memory dirty before it
 * writes back on its own, so without these the final fsync of a 1 GiB upload wrote all of it
 * while the client waited (~0.6 s here; ~0.2 s with a flush every 64 MiB). Small enough that a
 * 16 MiB upload chunk (fsync'd before its 202) has half its bytes on disk by the time it ends: with
 * chunks arriving at ~420 MB/s, 64 × 16 MiB chunks spent 0.8 s in their fsyncs with no background
 * flush and 0.4 s with one every 8 MiB (1 GiB monolithic: about the same as at 64 MiB).
 */
const FLUSH_BYTES = 8 * 1024 * 1024;

/**
 * A Writable over a descriptor the caller owns (written at its current offset, never closed here):
 * `writev`s what queued up while the previous write ran, and every `flushEvery` bytes starts an
 * `fdatasync` on the thread pool without waiting for it, so the disk writes while more arrives.
 */
class FileSink extends Writable {
  bytesWritten = 0;
  #sinceFlush = 0;
  #writing = false;
  #flushing: Promise<void> | undefined;
  #flushError: Error | undefined;
  #afterIo: (() => void) | undefined;

  constructor(
    readonly fd: number,
    readonly flushEvery: number | undefined,
  ) {
    super({ highWaterMark: CHUNK });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#writeBuffers([chunk], callback);
  }

  override _writev(
    chunks: { chunk: Buffer; encoding: BufferEncoding }[],
    callback: (error?: Error | null) => void,
  ): void {
    this.#writeBuffers(
      chunks.map((c) => c.chunk),
      callback,
    );
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // A write in flight still uses the descriptor: report destruction once it is done.
    if (this.#writing) this.#afterIo = () => callback(error);
    else callback(error);
  }

  /** Resolves once no write or flush is in flight. */
  async idle(): Promise<void> {
    while (this.#writing) await new Promise<void>((resolve) => this.once("ioDone", resolve));
    await this.#flushing;
  }

  throwIfFlushFailed(): void {
    if (this.#flushError) throw this.#flushError;
  }

  #writeBuffers(buffers: Buffer[], callback: (error?: Error | null) => void): void {
    this.#writing = true;
    const done = (err: Error | null) => {
      this.#writing = false;
      this.emit("ioDone");
      callback(err);
      const destroyed = this.#afterIo;
      this.#afterIo = undefined;
      destroyed?.();
    };
    const next = (list: Buffer[]) => {
      writev(this.fd, list, null, (err, written) => {
        if (err) return done(err);
        this.#wrote(written);
        const rest = remainder(list, written);
        if (rest.length === 0) done(null);
        else next(rest);
      });
    };
    next(buffers);
  }

  #wrote(n: number): void {
    this.bytesWritten += n;
    this.#sinceFlush += n;
    if (this.flushEvery === undefined || this.#sinceFlush < this.flushEvery || this.#flushing) return;
    this.#sinceFlush = 0;
    this.#flushing = new Promise<void>((resolve) => {
      fdatasync(this.fd, (err) => {
        if (err) this.#flushError ??= err;
        this.#flushing = undefined;
        resolve();
      });
    });
  }
}

/** What of `buffers` is left after the first `written` bytes of them went out. */
function remainder(buffers: Buffer[], written: number): Buffer[] {
  let skip = written;
  let i = 0;
  while (i < buffers.length && skip >= (buffers[i] as Buffer).length) skip -= (buffers[i++] as Buffer).length;
  const rest = buffers.slice(i);
  if (skip > 0 && rest.length > 0) rest[0] = (rest[0] as Buffer).subarray(skip);
  return rest;
}

/** Runs `op`; when it fails with ENOENT, creates `path`'s parent directory and retries. */
async function withParent<T>(path: string, op: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (code(err) !== "ENOENT" || attempt >= PARENT_RETRIES) throw err;
      await mkdir(dirname(path), { recursive: true });
    }
  }
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

/** ENOENT, or ENOTDIR (a path component is a file: no object there either). */
function isMissing(err: unknown): boolean {
  const c = code(err);
  return c === "ENOENT" || c === "ENOTDIR";
}
