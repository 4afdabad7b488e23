import type { Clock } from "../core/clock.js";
import { tracedRoot } from "../core/tracing.js";
import type { GcMetrics } from "../observability/gc-metrics.js";
import { collectGarbage } from "../registry/data-plane/garbage-collector.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import type { Store } from "../storage/store.js";

/**
 * Runs `collectGarbage` every `intervalMs` (never when 0), one run at a time (a `gc` span, with
 * tracing on), logging each report and counting it in `metrics`. Several servers may run it: deletions take the exclusive registry
 * lock and re-check their rules.
 */
export function scheduleGarbageCollection(
  intervalMs: number,
  deps: { store: Store; blobs: BlobDriver; clock: Clock },
  logger: (line: object) => void,
  metrics: GcMetrics,
): { stop(): void; idle(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  const timer =
    intervalMs > 0
      ? setInterval(() => {
          running = running.then(async () => {
            const started = performance.now();
            const seconds = () => (performance.now() - started) / 1000;
            try {
              const report = await tracedRoot("gc", {}, () => collectGarbage(deps));
              metrics.run("success", seconds(), report);
              logger({ msg: "garbage collected", event: "gc", ...report });
            } catch (err) {
              metrics.run("error", seconds());
              logger({ level: "error", msg: "garbage collection failed", event: "gc", error: String(err) });
            }
          });
        }, intervalMs)
      : undefined;
  timer?.unref();
  return { stop: () => clearInterval(timer), idle: () => running };
}
