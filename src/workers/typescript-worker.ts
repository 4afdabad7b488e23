import { Worker } from "node:worker_threads";

const BOOT = new URL("./typescript-worker-boot.mjs", import.meta.url);

/**
 * Starts a worker thread running the TypeScript module `entry` (a file URL) with `data` as its
 * `workerData.data`. The module reads its data with `workerDataOf()`. Starting costs ~350 ms of
 * one core (loader and module compilation), so a worker is for long-lived work.
 */
export function startTypeScriptWorker(entry: URL, data: unknown): Worker {
  return new Worker(BOOT, { workerData: { entry: entry.href, data } });
}

/** Inside a worker started by startTypeScriptWorker: the data it was given. */
export function workerDataOf<T>(workerData: unknown): T {
  return (workerData as { data: T }).data;
}
