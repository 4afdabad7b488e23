import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { type Kysely, sql } from "kysely";
import pg from "pg";
import { connectPostgres } from "../../../../src/storage/sql/connect-postgres.js";
import type { Database } from "../../../../src/storage/sql/schema.js";
import { createTestDatabase, engineSkipReason, type TestDatabase } from "../../../support/databases.js";

/** Terminates backend `pid` (as a server restart or `drop database … with (force)` does) and waits until it is gone. */
async function terminateBackend(url: string, pid: number): Promise<void> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query("select pg_terminate_backend($1)", [pid]);
    for (let i = 0; i < 100; i++) {
      const { rowCount } = await admin.query("select 1 from pg_stat_activity where pid = $1", [pid]);
      if (rowCount === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await admin.end();
  }
  // The client sees the closed socket right after the backend exits.
  await new Promise((resolve) => setTimeout(resolve, 100));
}

/**
 * Runs `fn` in a transaction on `db` after reading the backend's pid (`pid`); `failure` resolves
 * to what the transaction rejected with (undefined when it committed).
 */
function transactionOnBackend(
  db: Kysely<Database>,
  fn: (trx: Kysely<Database>) => Promise<void>,
): { pid: Promise<number>; failure: Promise<unknown> } {
  let pidOf: (pid: number) => void = () => {};
  const pid = new Promise<number>((resolve) => {
    pidOf = resolve;
  });
  const failure = db
    .transaction()
    .execute(async (trx) => {
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
      pidOf(Number(rows[0]?.pid));
      await fn(trx);
    })
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  return { pid, failure };
}

// A connection lost under a client the pool has handed out (a query in flight, or a transaction
// between statements) once crashed the process: pg emits "error" on such a client, and the pool
// listens only on idle ones. (Seen when a test dropped a database with force under a running server.)
describe("connectPostgres: a lost connection", { skip: engineSkipReason("postgres") }, () => {
  let testDb: TestDatabase;
  let url: string;
  let db: Kysely<Database>;
  const uncaught: unknown[] = [];
  const record = (err: unknown) => uncaught.push(err);

  before(async () => {
    testDb = createTestDatabase("postgres");
    url = (await testDb.freshOptions()).databaseUrl as string;
    db = connectPostgres(url);
    process.on("uncaughtException", record);
  });
  after(async () => {
    process.off("uncaughtException", record);
    await db?.destroy();
    await testDb?.dispose();
  });

  it("under a query in flight: the query rejects, nothing is thrown, the next query opens a new connection", async () => {
    const tx = transactionOnBackend(db, async (trx) => {
      await sql`select pg_sleep(30)`.execute(trx);
    });
    await terminateBackend(url, await tx.pid);
    assert.ok((await tx.failure) instanceof Error);
    assert.deepEqual(uncaught, []);
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
    assert.equal(rows[0]?.one, 1);
  });

  it("under a transaction between statements: the next statement rejects, nothing is thrown", async () => {
    let release: () => void = () => {};
    const paused = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tx = transactionOnBackend(db, async (trx) => {
      await paused;
      await sql`select 1`.execute(trx);
    });
    await terminateBackend(url, await tx.pid);
    release();
    assert.ok((await tx.failure) instanceof Error);
    assert.deepEqual(uncaught, []);
    const { rows } = await sql<{ one: number }>`select 1 as one`.execute(db);
    assert.equal(rows[0]?.one, 1);
  });
});
