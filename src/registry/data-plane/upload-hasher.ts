import { createHash, type Hash } from "node:crypto";
import { Worker } from "node:worker_threads";
import { moduleUrl, workerExecArgv } from "../../core/module-url.js";
import type { DigestAlgorithm } from "../digest.js";

/**
 * A running digest over an upload's bytes, fed in order. `update` returns a promise only when the
 * caller must wait before feeding more (the worker is behind); `digest` ends it and resolves with the
 * hex digest, or `undefined` when the state was lost (the worker died or was closed): the caller
 * then hashes the stored bytes instead.
 */
export interface RunningDigest {
  readonly algorithm: DigestAlgorithm;
  update(chunk: Buffer): Promise<void> | undefined;
  /** Resolves once every byte fed so far was hashed (frees the worker's ring between chunks). */
  settle(): Promise<void>;
  digest(): Promise<string | undefined>;
  /** Forgets the state; no further calls. */
  dispose(): void;
}

/** Creates running digests: on a worker thread for large uploads, in this thread for small ones. */
export interface UploadHasher {
  /**
   * A running digest of `algorithm`. `expectedBytes` is what the first request will feed when
   * known (Content-Length): below {@link WORKER_THRESHOLD} the hash runs in this thread (a worker
   * round trip would cost more than it saves); unknown counts as large.
   */
  create(algorithm: DigestAlgorithm, expectedBytes?: number): RunningDigest;
  /** Ends every running digest's worker state and terminates the worker (a new one starts on demand). */
  close(): Promise<void>;
}

/**
 * Bodies from this size on are hashed on the worker thread. The worker costs CPU too (the copy into
 * the ring, messages, two threads on the same memory): on a 1 GiB push in 16 MiB PATCHes it added
 * ~1.2 s of CPU per GiB for no gain in rate here, while a 1 GiB monolithic push gained; so chunks of
 * the usual sizes hash inline, and long bodies (monolithic, or a PATCH of unknown length) on the
 * worker.
 */
export const WORKER_THRESHOLD = 32 * 1024 * 1024;
/** Bytes a running digest may have copied but not yet hashed; also its ring's size. */
const RING_BYTES = 8 * 1024 * 1024;
/** Bytes copied before they are handed to the worker in one message. */
const BATCH_BYTES = 1024 * 1024;
/** Rings kept for reuse. */
const SPARE_RINGS = 4;

/** The module the worker thread runs: hash state lives there, keyed by the digest's id. */
const HASH_WORKER = moduleUrl("../../workers/upload-hash", import.meta.url);

/** Messages to the worker: bytes arrive as ranges of a shared ring, which never wrap. */
export type ToHashWorker =
  | { type: "open"; id: number; algorithm: DigestAlgorithm }
  | { type: "update"; id: number; ring: SharedArrayBuffer; start: number; length: number }
  | { type: "digest"; id: number }
  | { type: "drop"; id: number };

/** Messages from the worker: a range hashed, or a digest (`null` for an id it does not know). */
export type FromHashWorker =
  | { type: "done"; id: number; length: number }
  | { type: "digest"; id: number; hex: string | null };

/** A digest computed in this thread. */
class InlineDigest implements RunningDigest {
  readonly #hash: Hash;
  constructor(readonly algorithm: DigestAlgorithm) {
    this.#hash = createHash(algorithm);
  }
  update(chunk: Buffer): undefined {
    this.#hash.update(chunk);
    return undefined;
  }
  settle(): Promise<void> {
    return Promise.resolve();
  }
  async digest(): Promise<string> {
    return this.#hash.digest("hex");
  }
  dispose(): void {}
}

/** The worker and what is running on it. */
class HashWorker {
  readonly #worker: Worker;
  readonly #digests = new Map<number, WorkerDigest>();
  #nextId = 1;
  #dead = false;
  /** Messages sent that the worker answers and whose answer has not come yet. */
  #awaiting = 0;

  constructor(readonly spareRings: SharedArrayBuffer[]) {
    this.#worker = new Worker(HASH_WORKER, { execArgv: workerExecArgv(HASH_WORKER) });
    // Idle, it never keeps a process alive (close() terminates it); while a reply is awaited it does.
    this.#worker.unref();
    this.#worker.on("message", (m: FromHashWorker) => {
      if (--this.#awaiting === 0) this.#worker.unref();
      this.#digests.get(m.id)?.receive(m);
    });
    this.#worker.on("error", () => this.#die());
    this.#worker.on("exit", () => this.#die());
  }

  get dead(): boolean {
    return this.#dead;
  }

  open(algorithm: DigestAlgorithm): WorkerDigest {
    const id = this.#nextId++;
    const digest = new WorkerDigest(this, id, algorithm);
    this.#digests.set(id, digest);
    this.post({ type: "open", id, algorithm });
    return digest;
  }

  /** Sends `message`; `answered` when the worker replies to it (update, digest). */
  post(message: ToHashWorker, answered = false): void {
    if (this.#dead) return;
    if (answered && this.#awaiting++ === 0) this.#worker.ref();
    this.#worker.postMessage(message);
  }

  forget(id: number): void {
    this.#digests.delete(id);
  }

  async terminate(): Promise<void> {
    this.#die();
    await this.#worker.terminate();
  }

  #die(): void {
    if (this.#dead) return;
    this.#dead = true;
    for (const digest of this.#digests.values()) digest.lose();
    this.#digests.clear();
  }
}

/**
 * A digest whose hashing runs on the worker. `update` copies the chunk into a shared ring (one
 * memcpy) and hands the worker 1 MiB ranges; the caller waits only when the worker is a whole ring
 * behind. So the main thread receives and writes while the worker hashes: a push approaches
 * min(hash, I/O) rather than their serial sum.
 */
class WorkerDigest implements RunningDigest {
  #ring: SharedArrayBuffer | undefined;
  #view: Buffer | undefined;
  /** Bytes copied into the ring, handed to the worker, and hashed by it (running totals). */
  #copied = 0;
  #posted = 0;
  #hashed = 0;
  #lost = false;
  #wake: (() => void) | undefined;
  #result: ((hex: string | undefined) => void) | undefined;

  constructor(
    readonly owner: HashWorker,
    readonly id: number,
    readonly algorithm: DigestAlgorithm,
  ) {}

  update(chunk: Buffer): Promise<void> | undefined {
    if (this.#lost) return undefined;
    let offset = 0;
    while (offset < chunk.length) {
      const free = RING_BYTES - (this.#copied - this.#hashed);
      if (free === 0) return this.#waitThen(() => this.update(chunk.subarray(offset)));
      const ring = this.#ringView();
      const at = this.#copied % RING_BYTES;
      const n = Math.min(chunk.length - offset, free, RING_BYTES - at);
      chunk.copy(ring, at, offset, offset + n);
      this.#copied += n;
      offset += n;
      // Ranges never wrap: hand over at the ring's end as well as every batch.
      if (this.#copied - this.#posted >= BATCH_BYTES || at + n === RING_BYTES) this.#post();
    }
    return undefined;
  }

  async settle(): Promise<void> {
    this.#post();
    while (!this.#lost && this.#hashed < this.#copied) await this.#waitThen(() => undefined);
    this.#releaseRing();
  }

  async digest(): Promise<string | undefined> {
    if (this.#lost) return undefined;
    this.#post();
    const hex = await new Promise<string | undefined>((resolve) => {
      this.#result = resolve;
      this.owner.post({ type: "digest", id: this.id }, true);
    });
    this.owner.forget(this.id);
    this.#releaseRing();
    return hex;
  }

  dispose(): void {
    if (this.#lost) return;
    this.#lost = true;
    this.owner.post({ type: "drop", id: this.id });
    this.owner.forget(this.id);
    // The worker may still read in-flight ranges of this ring: never hand it to another digest.
    this.#ring = undefined;
    this.#view = undefined;
    this.#wake?.();
  }

  receive(m: FromHashWorker): void {
    if (m.type === "done") {
      this.#hashed += m.length;
      const wake = this.#wake;
      this.#wake = undefined;
      wake?.();
    } else {
      this.#result?.(m.hex ?? undefined);
      this.#result = undefined;
    }
  }

  /** The worker is gone: waiters go on, the digest will be `undefined`. */
  lose(): void {
    this.#lost = true;
    this.#ring = undefined;
    this.#view = undefined;
    this.#wake?.();
    this.#wake = undefined;
    this.#result?.(undefined);
    this.#result = undefined;
  }

  #post(): void {
    if (this.#lost || this.#posted === this.#copied || this.#ring === undefined) return;
    const start = this.#posted % RING_BYTES;
    const length = this.#copied - this.#posted;
    this.#posted = this.#copied;
    this.owner.post({ type: "update", id: this.id, ring: this.#ring, start, length }, true);
  }

  #waitThen<T>(next: () => T): Promise<Awaited<T> | undefined> {
    this.#post();
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
    }).then(() => (this.#lost ? undefined : next())) as Promise<Awaited<T> | undefined>;
  }

  #ringView(): Buffer {
    if (this.#view === undefined) {
      this.#ring = this.owner.spareRings.pop() ?? new SharedArrayBuffer(RING_BYTES);
      this.#view = Buffer.from(this.#ring);
    }
    return this.#view;
  }

  /** Returns the ring for reuse once the worker hashed all of it (nothing of it is in flight). */
  #releaseRing(): void {
    if (this.#ring === undefined || this.#hashed !== this.#copied) return;
    if (this.owner.spareRings.length < SPARE_RINGS) this.owner.spareRings.push(this.#ring);
    this.#ring = undefined;
    this.#view = undefined;
  }
}

/**
 * Creates a hasher. Its worker starts with the first large upload, is unref'd (never keeps the
 * process alive) and ends with `close()` (the registry server calls it when it closes); when it
 * dies, running digests report `undefined` and uploads hash the stored bytes instead.
 */
export function createUploadHasher(): UploadHasher {
  let worker: HashWorker | undefined;
  const spareRings: SharedArrayBuffer[] = [];
  return {
    create(algorithm, expectedBytes) {
      if (expectedBytes !== undefined && expectedBytes < WORKER_THRESHOLD) return new InlineDigest(algorithm);
      if (worker === undefined || worker.dead) worker = new HashWorker(spareRings);
      return worker.open(algorithm);
    },
    async close() {
      const closing = worker;
      worker = undefined;
      spareRings.length = 0;
      await closing?.terminate();
    },
  };
}
