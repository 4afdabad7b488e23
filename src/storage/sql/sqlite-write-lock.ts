import { threadId } from "node:worker_threads";

/** Bytes of the shared memory a SqliteWriteLock lives in (one 32-bit word). */
const LOCK_BYTES = 4;
const FREE = 0;

/** The shared memory of a new, free write lock: pass it to every thread that opens the file. */
export function createSqliteWriteLockMemory(): SharedArrayBuffer {
  return new SharedArrayBuffer(LOCK_BYTES);
}

/**
 * The write lock of one SQLite file among the threads of one process, over shared memory
 * (createSqliteWriteLockMemory), taken before `BEGIN IMMEDIATE` and given back after the commit
 * or rollback.
 *
 * Why: SQLite makes a connection that finds the file's write lock taken wait in its busy handler,
 * which sleeps the whole thread in steps of 1 to 100 ms. A serving thread waiting there for the
 * delivery thread's bookkeeping (or the other way round) answered nothing meanwhile and often
 * slept long after the lock was free. Here a waiter awaits (`Atomics.waitAsync`): its event loop
 * runs on, and it is woken when the holder releases. Other processes still meet SQLite's own lock.
 *
 * The word holds `threadId + 1` of the holder, so a thread that died holding it can be found
 * (releaseHeldBy). `acquire` gives up after `timeoutMs`, like busy_timeout.
 */
export class SqliteWriteLock {
  readonly #word: Int32Array;
  readonly #self = threadId + 1;

  constructor(memory: SharedArrayBuffer) {
    this.#word = new Int32Array(memory, 0, 1);
  }

  /**
   * Resolves once this thread holds the lock; rejects with a "database is locked" error when it
   * stayed taken for `timeoutMs`. Not reentrant: a thread holding it that asks again waits for itself.
   */
  async acquire(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const holder = Atomics.compareExchange(this.#word, 0, FREE, this.#self);
      if (holder === FREE) return;
      const left = deadline - performance.now();
      if (left <= 0) {
        throw new Error(
          `database is locked: thread ${holder - 1} of this process held the write lock for ${timeoutMs} ms`,
        );
      }
      // "not-equal" (released meanwhile) comes back synchronously: try again at once.
      const waiting = Atomics.waitAsync(this.#word, 0, holder, left);
      if (waiting.async) await waiting.value;
    }
  }

  /** Gives the lock back (the caller holds it) and wakes one waiter. */
  release(): void {
    Atomics.store(this.#word, 0, FREE);
    Atomics.notify(this.#word, 0, 1);
  }

  /** Frees the lock if the thread with this id holds it (after that thread died); true if it did. */
  releaseHeldBy(deadThreadId: number): boolean {
    if (Atomics.compareExchange(this.#word, 0, deadThreadId + 1, FREE) !== deadThreadId + 1) return false;
    Atomics.notify(this.#word, 0, 1);
    return true;
  }
}
