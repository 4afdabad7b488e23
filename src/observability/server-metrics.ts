import { collectDefaultMetrics, Registry } from "prom-client";
import { type ApiMetrics, createApiMetrics } from "./api-metrics.js";
import { hostMetricsFromPrimary } from "./cluster-metrics.js";
import { type EventMetricsOptions, registerEventMetrics } from "./event-metrics.js";
import { createGcMetrics, type GcMetrics } from "./gc-metrics.js";
import { createRegistryMetrics, type RegistryMetrics } from "./registry-metrics.js";
import { createReplicationMetrics, type ReplicationMetrics } from "./replication-metrics.js";

/** Every metric of one server, on a registry of its own (several servers may share a process). */
export interface ServerMetrics {
  api: ApiMetrics;
  registry: RegistryMetrics;
  gc: GcMetrics;
  replication: ReplicationMetrics;
  /** The `content-type` of {@link render}'s text (Prometheus text exposition 0.0.4). */
  readonly contentType: string;
  /** The exposition text of every metric; runs the scrape-time reads (the event backlog). */
  render(): Promise<string>;
}

/**
 * Creates a server's metrics: API, registry, garbage collection, replication, the event delivery backlog
 * (read from the store at scrape time) and prom-client's default process metrics (CPU, memory,
 * event loop lag, GC pauses; `wharf_` prefixed). In a `--workers` cluster worker (`clusterWorker`),
 * `render` answers for the whole host: the primary sums every worker's metrics and adds its own.
 */
export function createServerMetrics(options: {
  events: EventMetricsOptions;
  clusterWorker?: boolean;
}): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "wharf_" });
  registerEventMetrics(registry, options.events);
  return {
    api: createApiMetrics(registry),
    registry: createRegistryMetrics(registry),
    gc: createGcMetrics(registry),
    replication: createReplicationMetrics(registry),
    contentType: registry.contentType,
    render: options.clusterWorker ? hostMetricsFromPrimary(registry) : () => registry.metrics(),
  };
}
