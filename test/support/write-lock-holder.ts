// A worker thread that takes the SqliteWriteLock over `workerData` (a SharedArrayBuffer),
// says "held", then on "release" gives it back and says "released", or on "die" exits holding it.
import { parentPort, workerData } from "node:worker_threads";
import { SqliteWriteLock } from "../../src/storage/sql/sqlite-write-lock.js";

const port = parentPort;
if (!port) throw new Error("write-lock-holder.ts runs as a worker thread");
const lock = new SqliteWriteLock(workerData as SharedArrayBuffer);
await lock.acquire(5000);
port.postMessage("held");
port.on("message", (message: "release" | "die") => {
  if (message === "die") process.exit(0);
  lock.release();
  port.postMessage("released");
  port.close();
});
