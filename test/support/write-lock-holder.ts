// A worker thread (startTypeScriptWorker) that takes the SqliteWriteLock over `workerData.data`,
// says "held", then on "release" gives it back and says "released", or on "die" exits holding it.
import { parentPort, workerData } from "node:worker_threads";
import { SqliteWriteLock } from "../../src/storage/sql/sqlite-write-lock.js";
import { workerDataOf } from "../../src/workers/typescript-worker.js";

const port = parentPort;
if (!port) throw new Error("write-lock-holder.ts runs as a worker thread");
const lock = new SqliteWriteLock(workerDataOf<SharedArrayBuffer>(workerData));
await lock.acquire(5000);
port.postMessage("held");
port.on("message", (message: "release" | "die") => {
  if (message === "die") process.exit(0);
  lock.release();
  port.postMessage("released");
  port.close();
});
