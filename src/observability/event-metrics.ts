import { Gauge, type Registry } from "prom-client";
import type { DeliveryBacklog } from "../storage/event-store.js";

/** Options of {@link registerEventMetrics}. */
export interface EventMetricsOptions {
  /** Reads the backlog of every subscription (SubscriptionStore.backlog). */
  backlog(pendingLimit: number): Promise<DeliveryBacklog>;
  /** Now, in ms since the epoch (the lag is measured against it). */
  now(): number;
  /** Where counting pending deliveries stops (default 10,000). */
  pendingLimit?: number;
  /** How long a backlog read may take before the scrape goes on without it (default 2 s). */
  timeoutMs?: number;
}

/**
 * Registers gauges read from the store at scrape time (delivery runs on another thread, so the
 * store is what knows): `wharf_events_pending_deliveries` (capped at `pendingLimit`),
 * `wharf_events_dead_letters`, `wharf_events_delivery_lag_seconds` (age of the oldest event still
 * owed to a subscription, 0 when none) and `wharf_events_backlog_up` (1 when the read answered in
 * time; on 0 the others keep their previous values). The gauges of one scrape share one read.
 */
export function registerEventMetrics(registry: Registry, options: EventMetricsOptions): void {
  const pendingLimit = options.pendingLimit ?? 10_000;
  const timeoutMs = options.timeoutMs ?? 2000;
  let shared: { at: number; read: Promise<DeliveryBacklog | undefined> } | undefined;
  const read = (): Promise<DeliveryBacklog | undefined> => {
    // Gauges of one scrape collect concurrently: the first starts the read, the others join it.
    // Timed by the process (a test's clock may stand still), not by `now`.
    const now = performance.now();
    if (shared === undefined || now - shared.at > 500) {
      shared = { at: now, read: withTimeout(options.backlog(pendingLimit), timeoutMs) };
    }
    return shared.read;
  };
  const registers = [registry];
  new Gauge({
    name: "wharf_events_backlog_up",
    help: "1 when this scrape read the delivery backlog from the store in time, else 0.",
    registers,
    // Read from the shared database: with several workers, one value for the host, not a sum.
    aggregator: "min",
    async collect() {
      this.set((await read()) ? 1 : 0);
    },
  });
  new Gauge({
    name: "wharf_events_pending_deliveries",
    help: `Webhook deliveries owed (an event once per subscription), counted up to ${pendingLimit}.`,
    registers,
    aggregator: "max",
    async collect() {
      const backlog = await read();
      if (backlog) this.set(backlog.pending);
    },
  });
  new Gauge({
    name: "wharf_events_dead_letters",
    help: "Webhook deliveries given up on after the last attempt, still kept.",
    registers,
    aggregator: "max",
    async collect() {
      const backlog = await read();
      if (backlog) this.set(backlog.deadLetters);
    },
  });
  new Gauge({
    name: "wharf_events_delivery_lag_seconds",
    help: "Age of the oldest event still owed to a subscription (0 when none is owed).",
    registers,
    aggregator: "max",
    async collect() {
      const backlog = await read();
      if (!backlog) return;
      const oldest = backlog.oldestPendingTime;
      this.set(oldest === undefined ? 0 : Math.max(0, (options.now() - oldest) / 1000));
    },
  });
}

/** `promise`'s value, or undefined when it rejects or takes longer than `ms`. */
async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
