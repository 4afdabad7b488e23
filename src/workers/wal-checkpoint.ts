// The WAL checkpoint thread of one SQLite file (started by storage/sql/wal-checkpointer.ts): its own
// connection runs a PASSIVE checkpoint every `intervalMs` until the serving thread says close.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import type { FromWalCheckpointWorker, WalCheckpointWorkerData } from "../storage/sql/wal-checkpointer.js";

const port = parentPort;
if (!port)
  throw new Error("workers/wal-checkpoint runs as a worker thread (see storage/sql/wal-checkpointer.ts)");
const { path, intervalMs } = workerData as WalCheckpointWorkerData;
const db = new Database(path, { fileMustExist: true });
db.pragma("synchronous = NORMAL");
let reported = false;
const timer = setInterval(() => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
  } catch (err) {
    if (!reported)
      port.postMessage({ error: String((err as Error)?.message || err) } satisfies FromWalCheckpointWorker);
    reported = true;
  }
}, intervalMs);
port.on("message", () => {
  clearInterval(timer);
  db.close();
  port.close();
});
