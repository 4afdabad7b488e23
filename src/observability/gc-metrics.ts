import { Counter, Histogram, type Registry } from "prom-client";

/** What one garbage collection run removed (the fields of the collector's report). */
export interface GcRemoved {
  manifests: number;
  links: number;
  blobs: number;
  bytes: number;
  uploads: number;
  strayObjects: number;
}

/** Records the server's scheduled garbage collection runs. */
export interface GcMetrics {
  /** One run that ended with `outcome` after `seconds`; `removed` when it succeeded. */
  run(outcome: "success" | "error", seconds: number, removed?: GcRemoved): void;
}

const REMOVED_KINDS = ["manifests", "links", "blobs", "uploads", "strayObjects"] as const;

/**
 * Registers `wharf_gc_runs_total{outcome}`, `wharf_gc_duration_seconds`,
 * `wharf_gc_removed_objects_total{kind}` and `wharf_gc_removed_bytes_total` on `registry`. Every
 * series exists from the start (at 0), so a rate over them is defined before the first run.
 */
export function createGcMetrics(registry: Registry): GcMetrics {
  const registers = [registry];
  const runs = new Counter({
    name: "wharf_gc_runs_total",
    help: "Garbage collection runs of this server by outcome.",
    labelNames: ["outcome"] as const,
    registers,
  });
  const duration = new Histogram({
    name: "wharf_gc_duration_seconds",
    help: "Duration of garbage collection runs.",
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
    registers,
  });
  const removed = new Counter({
    name: "wharf_gc_removed_objects_total",
    help: "Objects garbage collection removed, by kind (manifests, links, blobs, uploads, strayObjects).",
    labelNames: ["kind"] as const,
    registers,
  });
  const removedBytes = new Counter({
    name: "wharf_gc_removed_bytes_total",
    help: "Blob bytes garbage collection removed.",
    registers,
  });
  for (const outcome of ["success", "error"]) runs.labels(outcome).inc(0);
  for (const kind of REMOVED_KINDS) removed.labels(kind).inc(0);
  return {
    run(outcome, seconds, report) {
      runs.labels(outcome).inc();
      duration.observe(seconds);
      if (report === undefined) return;
      for (const kind of REMOVED_KINDS) removed.labels(kind).inc(report[kind]);
      removedBytes.inc(report.bytes);
    },
  };
}
