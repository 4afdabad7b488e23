import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { Clock } from "../../core/clock.js";
import type { SecretBox } from "../../core/secret-box.js";
import type { ReplicationMetrics } from "../../observability/replication-metrics.js";
import type { Store } from "../../storage/store.js";
import type { ReplicationCopier } from "./replication-contract.js";
import { executeRun } from "./replication-executor.js";
import { fireDueIntervals, firePushTriggers } from "./replication-triggers.js";

/** How often the worker looks for triggers and runs by default (ms): ON_PUSH starts within about this. */
export const DEFAULT_REPLICATION_POLL_MS = 1_000;
/** How long a run's lease lasts by default (ms): a killed process's run is taken over after it. */
export const DEFAULT_REPLICATION_LEASE_MS = 60_000;
/** Runs one process executes at the same time by default. */
export const DEFAULT_REPLICATION_CONCURRENCY = 2;

export interface ReplicationWorkerOptions {
  store: Store;
  secrets: SecretBox;
  copier: ReplicationCopier;
  clock: Clock;
  logger: (line: object) => void;
  metrics?: ReplicationMetrics | undefined;
  pollMs?: number | undefined;
  leaseMs?: number | undefined;
  /** How often a run's progress is written while it changes (ms, default 1 s). */
  progressMs?: number | undefined;
  concurrency?: number | undefined;
}

/** The running worker. */
export interface ReplicationWorker {
  /** Looks for triggers and runs now (a run was queued, a push happened) rather than at the next poll. */
  poke(): void;
  /** Stops polling; runs in progress are aborted and given back for any process to start again. */
  close(): Promise<void>;
}

/**
 * Replication's background work in one process (ADR 0054): every `pollMs` (and on `poke`) it
 * queues the runs of due INTERVAL rules and of ON_PUSH rules matching new pushes (triggers.ts),
 * then claims runs up to `concurrency` (a queued run of an idle rule, or a run whose lease ended)
 * and executes each (executor.ts). Each claim is won by one process of those sharing the
 * database. Each run's end, and each failure of the loop, is a log line.
 */
export function startReplicationWorker(options: ReplicationWorkerOptions): ReplicationWorker {
  const { store, clock, logger } = options;
  const owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  const leaseMs = options.leaseMs ?? DEFAULT_REPLICATION_LEASE_MS;
  const concurrency = options.concurrency ?? DEFAULT_REPLICATION_CONCURRENCY;
  const stop = new AbortController();
  const active = new Set<Promise<void>>();
  let polling: Promise<void> | undefined;
  let again = false;

  const execute = (run: Awaited<ReturnType<typeof store.replication.claimRun>> & object) => {
    options.metrics?.run("started");
    const done = executeRun(
      {
        ...{
          store,
          secrets: options.secrets,
          copier: options.copier,
          clock,
          logger,
          metrics: options.metrics,
        },
        ...{ owner, leaseMs, progressMs: options.progressMs ?? 1_000 },
      },
      run,
      stop.signal,
    )
      .then((outcome) => {
        if (outcome !== "stopped") options.metrics?.run(outcome === "SUCCEEDED" ? "succeeded" : "failed");
        logger({ msg: "replication run", event: "replication", rule: run.ruleUid, run: run.uid, outcome });
      })
      .catch((err: unknown) =>
        logger({
          level: "error",
          msg: "replication run failed",
          event: "replication",
          run: run.uid,
          error: String(err),
        }),
      )
      .finally(() => {
        active.delete(done);
        options.metrics?.running(active.size);
        poke(); // a queued run of the same rule may follow
      });
    active.add(done);
    options.metrics?.running(active.size);
  };

  const poll = async () => {
    const now = clock.now();
    await fireDueIntervals(store, now);
    await firePushTriggers(store, now);
    while (active.size < concurrency && !stop.signal.aborted) {
      const at = clock.now();
      const run = await store.replication.claimRun({ owner, now: at, leaseUntil: at + leaseMs });
      if (!run) break;
      execute(run);
    }
  };

  const poke = () => {
    if (stop.signal.aborted) return;
    if (polling) {
      again = true;
      return;
    }
    polling = poll()
      .catch((err: unknown) =>
        logger({ level: "error", msg: "replication: poll failed", event: "replication", error: String(err) }),
      )
      .finally(() => {
        polling = undefined;
        if (again) {
          again = false;
          poke();
        }
      });
  };

  const timer = setInterval(poke, options.pollMs ?? DEFAULT_REPLICATION_POLL_MS);
  timer.unref();
  return {
    poke,
    async close() {
      clearInterval(timer);
      stop.abort();
      await polling;
      await Promise.all([...active]);
    },
  };
}
