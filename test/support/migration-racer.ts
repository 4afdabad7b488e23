// A worker thread that connects to the database in `workerData.options` with a connection (and, on
// SQLite, a write lock) of its own, as a separate process would, waits at the barrier until every
// racer is connected, then runs migrateToLatest at the same instant as the others. It posts
// `{ applied }` (the names it applied) or `{ error }`.
import { parentPort, workerData } from "node:worker_threads";
import { sql } from "kysely";
import { connectDatabase, type DatabaseOptions } from "../../src/storage/sql/connect-database.js";
import { migrateToLatest } from "../../src/storage/sql/migrate.js";

const port = parentPort;
if (!port) throw new Error("migration-racer.ts runs as a worker thread");
const { options, barrier, racers } = workerData as {
  options: DatabaseOptions;
  barrier: SharedArrayBuffer;
  racers: number;
};
const { db, dialect } = await connectDatabase(options);
try {
  await sql`select 1`.execute(db);
  const arrived = new Int32Array(barrier);
  Atomics.add(arrived, 0, 1);
  Atomics.notify(arrived, 0);
  for (let n = Atomics.load(arrived, 0); n < racers; n = Atomics.load(arrived, 0)) {
    Atomics.wait(arrived, 0, n, 10_000);
  }
  port.postMessage({ applied: await migrateToLatest(db, dialect.name) });
} catch (err) {
  port.postMessage({ error: err instanceof Error ? err.message : String(err) });
} finally {
  await db.destroy();
}
