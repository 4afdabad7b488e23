import type { Clock } from "../core/clock.js";
import { createReadinessCheck, type ReadinessReport, SHUTTING_DOWN } from "../observability/readiness.js";
import { createServerMetrics, type ServerMetrics } from "../observability/server-metrics.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import type { Store } from "../storage/store.js";
import { PAGE_TOKEN_SECRET_KEY } from "./core.js";

/** What operators watch, on both faces: the server's metrics and its readiness check. */
export interface Operations {
  /** API, registry, GC and event-backlog metrics, rendered by the API's `/metrics`. */
  metrics: ServerMetrics;
  /** Answers both faces' `/readyz` (never rejects). */
  readiness: () => Promise<ReadinessReport>;
  /** From now on `readiness` answers {@link SHUTTING_DOWN} at once (the shutdown's first step). */
  shuttingDown(): void;
}

/**
 * Builds the metrics (the event backlog read from the store at scrape time) and the readiness
 * check: a read of the page-token secret (written by `buildCore`) and a stat of the blob probe,
 * until `shuttingDown()`.
 */
export function buildOperations(deps: {
  store: Store;
  blobs: BlobDriver;
  clock: Clock;
  logger: (line: object) => void;
  /** A `--workers` cluster worker: `/metrics` answers for the whole host (see createServerMetrics). */
  clusterWorker?: boolean;
}): Operations {
  const { store, blobs, clock, logger } = deps;
  const metrics = createServerMetrics({
    events: { backlog: (limit) => store.subscriptions.backlog(limit), now: () => clock.now() },
    clusterWorker: deps.clusterWorker,
  });
  const check = createReadinessCheck({
    database: () => store.settings.get(PAGE_TOKEN_SECRET_KEY),
    blobs,
    logger,
  });
  let stopping = false;
  const readiness = () => (stopping ? Promise.resolve(SHUTTING_DOWN) : check());
  const shuttingDown = () => {
    stopping = true;
  };
  return { metrics, readiness, shuttingDown };
}
