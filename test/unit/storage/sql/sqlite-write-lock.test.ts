import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { threadId, Worker } from "node:worker_threads";
import { sql } from "kysely";
import { connectSqlite } from "../../../../src/storage/sql/connect-sqlite.js";
import {
  createSqliteWriteLockMemory,
  SqliteWriteLock,
} from "../../../../src/storage/sql/sqlite-write-lock.js";

const HOLDER = new URL("../../../support/write-lock-holder.ts", import.meta.url);

/** Starts a thread holding the lock in `memory`; resolves once it holds it. */
async function holderThread(memory: SharedArrayBuffer): Promise<Worker> {
  const worker = new Worker(HOLDER, { workerData: memory });
  await new Promise<void>((resolve, reject) => {
    worker.once("message", () => resolve());
    worker.once("error", reject);
  });
  return worker;
}

/** Settles to "pending" if `promise` has not settled within `ms`, after the event loop ran. */
async function stateAfter(promise: Promise<unknown>, ms: number): Promise<string> {
  return Promise.race([
    promise.then(
      () => "resolved",
      (err: Error) => `rejected: ${err.message}`,
    ),
    new Promise<string>((resolve) => setTimeout(() => resolve("pending"), ms)),
  ]);
}

describe("SqliteWriteLock", () => {
  it("a waiter in another thread awaits without blocking its event loop and gets the lock on release", async () => {
    const memory = createSqliteWriteLockMemory();
    const holder = await holderThread(memory);
    const lock = new SqliteWriteLock(memory);
    const waiting = lock.acquire(10_000);
    // A timer firing proves the loop runs while the acquire is pending.
    assert.equal(await stateAfter(waiting, 100), "pending", "taken by the other thread");
    holder.postMessage("release");
    assert.equal(await stateAfter(waiting, 5000), "resolved", "woken by the release");
    const second = new SqliteWriteLock(memory).acquire(50);
    assert.match(await stateAfter(second, 1000), /^rejected: database is locked/, "now held here");
    lock.release();
    await new SqliteWriteLock(memory).acquire(50);
  });

  it("acquire gives up after its timeout with a database-is-locked error naming the holder", async () => {
    const memory = createSqliteWriteLockMemory();
    const holder = await holderThread(memory);
    try {
      const started = performance.now();
      await assert.rejects(new SqliteWriteLock(memory).acquire(200), (err: Error) => {
        assert.match(
          err.message,
          new RegExp(`^database is locked: thread ${holder.threadId} of this process`),
        );
        return true;
      });
      assert.ok(performance.now() - started >= 190, "waited for the timeout");
    } finally {
      holder.postMessage("release");
      await new Promise((resolve) => holder.once("exit", resolve));
    }
  });

  it("releaseHeldBy frees the lock of a thread that died holding it, and only that thread's", async () => {
    const memory = createSqliteWriteLockMemory();
    const holder = await holderThread(memory);
    const threadId = holder.threadId;
    const lock = new SqliteWriteLock(memory);
    const waiting = lock.acquire(10_000);
    holder.postMessage("die");
    await new Promise((resolve) => holder.once("exit", resolve));
    assert.equal(await stateAfter(waiting, 100), "pending", "a dead holder keeps it");
    assert.equal(lock.releaseHeldBy(threadId + 1000), false, "another thread id frees nothing");
    assert.equal(lock.releaseHeldBy(threadId), true);
    assert.equal(await stateAfter(waiting, 5000), "resolved", "the waiter gets it");
    assert.equal(lock.releaseHeldBy(threadId), false, "held by this thread now");
    lock.release();
  });
});

describe("SQLite connections sharing a write lock", () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups) await cleanup();
  });

  /** Two connections to a new file sharing one lock, closed (and the file removed) after the suite. */
  async function sharedConnections() {
    const dir = await mkdtemp(join(tmpdir(), "wharf-write-lock-"));
    const path = join(dir, "shared.db");
    const memory = createSqliteWriteLockMemory();
    const first = connectSqlite(path, { writeLock: memory });
    const second = connectSqlite(path, { writeLock: memory });
    cleanups.push(async () => {
      await first.destroy();
      await second.destroy();
      await rm(dir, { recursive: true, force: true });
    });
    return { path, memory, first, second };
  }

  it("a write waits for another connection's open transaction without blocking the event loop, then lands after it", async () => {
    const { path, first, second } = await sharedConnections();
    const reader = connectSqlite(path);
    try {
      await sql`create table t (n integer not null)`.execute(first);
      let commit = () => {};
      const open = new Promise<void>((resolve) => {
        commit = resolve;
      });
      let inside = () => {};
      const entered = new Promise<void>((resolve) => {
        inside = resolve;
      });
      const transaction = first.transaction().execute(async (trx) => {
        await sql`insert into t (n) values (1)`.execute(trx);
        inside();
        await open;
        await sql`insert into t (n) values (2)`.execute(trx);
      });
      await entered;
      // Without the shared lock, SQLite's busy handler would sleep this thread (and the
      // transaction it waits for) until SQLITE_BUSY.
      const plainWrite = sql`insert into t (n) values (3)`.execute(second);
      const otherTransaction = second.transaction().execute(async (trx) => {
        await sql`insert into t (n) values (4)`.execute(trx);
      });
      assert.equal(await stateAfter(plainWrite, 100), "pending", "the write waits");
      assert.equal(await stateAfter(otherTransaction, 0), "pending", "so does the transaction");
      // (A connection's own queries queue behind its waiting write; another's reads go on.)
      const read = await sql<{ n: bigint }>`select n from t`.execute(reader);
      assert.deepEqual(read.rows, [], "reads go on meanwhile (nothing committed yet)");
      commit();
      await transaction;
      await plainWrite;
      await otherTransaction;
      const rows = await sql<{ n: bigint }>`select n from t order by rowid`.execute(first);
      assert.deepEqual(
        rows.rows.map((r) => Number(r.n)),
        [1, 2, 3, 4],
      );
    } finally {
      await reader.destroy();
    }
  });

  it("a failed statement inside a transaction rolls back and frees the lock for the other connection", async () => {
    const { memory, first, second } = await sharedConnections();
    await sql`create table t (n integer not null unique)`.execute(first);
    await assert.rejects(
      first.transaction().execute(async (trx) => {
        await sql`insert into t (n) values (1)`.execute(trx);
        await sql`insert into t (n) values (1)`.execute(trx);
      }),
      /UNIQUE constraint failed/,
    );
    await assert.rejects(sql`insert into t (n) values (null)`.execute(second), /NOT NULL constraint failed/);
    await sql`insert into t (n) values (5)`.execute(second);
    await first.transaction().execute(async (trx) => {
      await sql`insert into t (n) values (6)`.execute(trx);
    });
    const rows = await sql<{ n: bigint }>`select n from t order by n`.execute(first);
    assert.deepEqual(
      rows.rows.map((r) => Number(r.n)),
      [5, 6],
      "the rolled-back insert is gone; later writes of both connections landed",
    );
    assert.equal(
      new SqliteWriteLock(memory).releaseHeldBy(threadId),
      false,
      "this thread no longer holds the lock",
    );
  });
});
