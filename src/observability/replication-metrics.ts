import { Counter, Gauge, type Registry } from "prom-client";

/** What replication runs report (ADR 0054); called by the replication worker. */
export interface ReplicationMetrics {
  /** A run was taken up (`started`) or ended (`succeeded`, `failed`) in this process. */
  run(outcome: "started" | "succeeded" | "failed"): void;
  /** How many runs this process is running now. */
  running(count: number): void;
  /** Adds a copier's progress. */
  copied(delta: {
    copiedManifests?: number;
    copiedBlobs?: number;
    copiedBytes?: number;
    skippedBlobs?: number;
  }): void;
}

/**
 * Registers `wharf_replication_runs_total{outcome}`, `wharf_replication_runs_running`,
 * `wharf_replication_copied_manifests_total`, `wharf_replication_copied_blobs_total`,
 * `wharf_replication_copied_bytes_total` and `wharf_replication_skipped_blobs_total` on `registry`.
 */
export function createReplicationMetrics(registry: Registry): ReplicationMetrics {
  const registers = [registry];
  const runs = new Counter({
    name: "wharf_replication_runs_total",
    help: "Replication runs taken up (started) and ended (succeeded, failed) by this process.",
    labelNames: ["outcome"] as const,
    registers,
  });
  const running = new Gauge({
    name: "wharf_replication_runs_running",
    help: "Replication runs this process is running now.",
    registers,
  });
  const counter = (name: string, help: string) => new Counter({ name, help, registers });
  const manifests = counter("wharf_replication_copied_manifests_total", "Manifests replication copied.");
  const blobs = counter("wharf_replication_copied_blobs_total", "Blobs replication copied.");
  const bytes = counter("wharf_replication_copied_bytes_total", "Blob bytes replication copied.");
  const skipped = counter(
    "wharf_replication_skipped_blobs_total",
    "Blobs replication did not send because the other side had them.",
  );
  return {
    run(outcome) {
      runs.labels(outcome).inc();
    },
    running(count) {
      running.set(count);
    },
    copied(delta) {
      if (delta.copiedManifests) manifests.inc(delta.copiedManifests);
      if (delta.copiedBlobs) blobs.inc(delta.copiedBlobs);
      if (delta.copiedBytes) bytes.inc(delta.copiedBytes);
      if (delta.skippedBlobs) skipped.inc(delta.skippedBlobs);
    },
  };
}
