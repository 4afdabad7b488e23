import { Worker } from "node:worker_threads";
import { moduleUrl, workerExecArgv } from "../../core/module-url.js";

/**
 * The WAL size, in pages, at which a connection whose checkpoints run in the background still
 * checkpoints in its own commits (SQLite's default is 1,000): a backstop for when the background
 * thread cannot keep up or stopped. Under a steady write load, the background thread's checkpoints
 * can keep missing the moment the WAL is fully copied back, so the WAL grows until this backstop
 * checkpoints (by then mostly copied already) and the next commit starts it over.
 */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = 10_000;

/**
 * What a larger WAL file is cut back to when it starts over (`journal_size_limit`); SQLite otherwise
 * keeps a WAL file at its largest. Above the ~41 MB a WAL reaches before the backstop checkpoints
 * (10,000 frames of 4,120 bytes), so a WAL that cycles up to the backstop under a steady write load
 * is reused in place; only one that grew further (a long read held checkpoints back) is cut. At
 * 16 MiB, the steady phase of `bench:events` (500 tag creates/s) cut the file from 30-39 MB back to
 * 16 MiB about every 0.7 s and extended it again (ADR 0002).
 */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/** How often the background thread checkpoints (ms). */
export const CHECKPOINT_INTERVAL_MS = 100;

/** The checkpoint thread of one SQLite file. */
export interface WalCheckpointer {
  /** Stops the thread (after a checkpoint in progress) and closes its connection. */
  close(): Promise<void>;
}

/** The module the checkpoint thread runs. */
const CHECKPOINT_WORKER = moduleUrl("../../workers/wal-checkpoint", import.meta.url);

/** What the checkpoint thread is started with. */
export interface WalCheckpointWorkerData {
  path: string;
  intervalMs: number;
}

/** The thread's one message: its first checkpoint failure. */
export type FromWalCheckpointWorker = { error: string };

/**
 * Runs `PRAGMA wal_checkpoint(PASSIVE)` on the SQLite file at `path` every `intervalMs` from a
 * worker thread with its own connection. A checkpoint copies committed WAL pages into the database
 * file and fsyncs it; run by a committing connection (SQLite's autocheckpoint), that stalls the
 * serving thread's event loop for milliseconds every ~1,000 pages written (measured: a quarter to a
 * half of the commit time under a tag-create load). PASSIVE never waits for readers or writers and
 * never blocks them. The process's own connections keep an autocheckpoint at
 * BACKSTOP_AUTOCHECKPOINT_PAGES and a `journal_size_limit` of WAL_SIZE_LIMIT_BYTES. The first failure is reported as a process warning; the thread
 * keeps trying.
 */
export function startWalCheckpointer(path: string, intervalMs = CHECKPOINT_INTERVAL_MS): WalCheckpointer {
  const workerData: WalCheckpointWorkerData = { path, intervalMs };
  const worker = new Worker(CHECKPOINT_WORKER, { workerData, execArgv: workerExecArgv(CHECKPOINT_WORKER) });
  // The process's own work keeps it alive; checkpoints alone must not.
  worker.unref();
  worker.on("message", (message: FromWalCheckpointWorker) =>
    process.emitWarning(`WAL checkpoint of ${path} failed: ${message.error}`, "WharfWarning"),
  );
  worker.on("error", (err) =>
    process.emitWarning(`WAL checkpoint thread of ${path} stopped: ${err.message}`, "WharfWarning"),
  );
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= (async () => {
        worker.ref();
        worker.postMessage("close");
        await exited;
      })();
      return closing;
    },
  };
}
