// Stands in for the dispatcher thread (startDispatcherThread's `entry`): takes the SqliteWriteLock
// of `workerData.database.sqliteWriteLock` and exits while holding it, as a delivery thread
// that dies mid-transaction would.
import { parentPort, workerData } from "node:worker_threads";
import type { DispatcherThreadData } from "../../src/events/dispatcher-thread.js";
import { SqliteWriteLock } from "../../src/storage/sql/sqlite-write-lock.js";

const memory = (workerData as DispatcherThreadData).database.sqliteWriteLock;
if (!parentPort || !memory) throw new Error("runs as a dispatcher thread given a sqliteWriteLock");
await new SqliteWriteLock(memory).acquire(5000);
process.exit(1);
