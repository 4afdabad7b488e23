import { Worker } from "node:worker_threads";
import { moduleUrl, workerExecArgv } from "../core/module-url.js";
import type { OpenStoreOptions } from "../storage/sql/open-store.js";
import { SqliteWriteLock } from "../storage/sql/sqlite-write-lock.js";
import {
  DEFAULT_DISPATCHER_OPTIONS,
  type DispatcherLogger,
  type DispatcherOptions,
  type EventDispatcher,
} from "./event-dispatcher.js";
import { throttlePokes } from "./poke-throttle.js";
import type { SinkAddressOptions } from "./sink-address-policy.js";

/**
 * What the dispatcher thread needs to deliver on its own: the same database, issuer, options and
 * sink address exceptions (host names are resolved with the system resolver there).
 */
export interface DispatcherThreadData {
  database: OpenStoreOptions;
  issuerUrl: string;
  options: Partial<DispatcherOptions>;
  sinkAddresses: SinkAddressOptions;
}

/** Messages from the thread: its log lines. */
export type FromDispatcherThread = { log: object };
/** Messages to the thread. */
export type ToDispatcherThread = "poke" | "close";

/** The module the delivery thread runs; it reads DispatcherThreadData as its `workerData`. */
const DISPATCHER_WORKER = moduleUrl("../workers/dispatcher", import.meta.url);
/** Wait before starting a thread again after it stopped unexpectedly. */
const RESTART_DELAY_MS = 1000;

/**
 * Runs webhook delivery (startWebhookDelivery) on a worker thread with its own connection to
 * the database, its own signing key ring (the same stored keys) and its own connection pools, so
 * delivery neither waits behind API requests on the serving thread's event loop nor takes its CPU:
 * under a write load, deliveries on the serving thread each waited several turns of a loop full of
 * requests (a few dozen deliveries/s while answering ~300 writes/s on the 2-core bench machine).
 *
 * `poke` forwards to the thread at most once per `pokeIntervalMs`, the rate its dispatcher starts
 * lease rounds at anyway: a poke held back is sent when the interval ends, so every append is
 * still followed by one. (Forwarding each of ~1,000 writes/s cost a message and a thread wake-up
 * each.) Log lines come back to `logger`. A thread that dies is logged and started again after a
 * second (under a new lease owner: its lanes are taken over once the dead one's heartbeat is
 * stale, as after a crash); a SQLite write lock it held
 * (`database.sqliteWriteLock`) is released.
 * `close` stops leasing, waits for the batches in flight and the thread's exit.
 * `entry`: the module the thread runs, given `data` as its `workerData` (tests substitute one that
 * fails in a chosen way); `restartDelayMs`: the wait before a restart (tests shorten it).
 */
export function startDispatcherThread(
  data: DispatcherThreadData,
  logger: DispatcherLogger,
  entry: URL = DISPATCHER_WORKER,
  restartDelayMs = RESTART_DELAY_MS,
): EventDispatcher {
  let closing = false;
  let worker: Worker | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  let stopped: Promise<void> = Promise.resolve();
  const writeLock = data.database.sqliteWriteLock && new SqliteWriteLock(data.database.sqliteWriteLock);

  const start = () => {
    const thread = new Worker(entry, { workerData: data, execArgv: workerExecArgv(entry) });
    // -1 once the thread stopped, which may be before "exit".
    const threadId = thread.threadId;
    worker = thread;
    // The serving process's listeners keep it alive; the thread alone must not.
    thread.unref();
    thread.on("message", (message: FromDispatcherThread) => logger(message.log));
    thread.on("error", (err) =>
      logger({ level: "error", msg: "event dispatcher thread failed", error: String(err) }),
    );
    stopped = new Promise((resolve) =>
      thread.once("exit", (code) => {
        if (worker === thread) worker = undefined;
        if (writeLock?.releaseHeldBy(threadId)) {
          logger({ msg: "event dispatcher thread stopped holding the database write lock; released it" });
        }
        resolve();
        if (closing) return;
        logger({ level: "warn", msg: "event dispatcher thread stopped; starting it again", code });
        restartTimer = setTimeout(start, restartDelayMs);
        restartTimer.unref();
      }),
    );
  };
  start();

  const send = (message: ToDispatcherThread) => worker?.postMessage(message);
  const pokes = throttlePokes(
    () => send("poke"),
    data.options.pokeIntervalMs ?? DEFAULT_DISPATCHER_OPTIONS.pokeIntervalMs,
  );
  return {
    poke() {
      if (!closing) pokes.poke();
    },
    async close() {
      closing = true;
      clearTimeout(restartTimer);
      pokes.cancel();
      // Held while closing, or a process with nothing else left would exit before the thread.
      worker?.ref();
      send("close");
      await stopped;
    },
  };
}
