import { ConfigError, type ConfigInput, loadConfig } from "../../config/config.js";
import { openConfiguredStore } from "../../config/open-configured-store.js";
import { storageLocationsOf } from "../../config/storage-locations.js";
import { systemClock } from "../../core/clock.js";
import { parseDurationSeconds } from "../../core/duration.js";
import { tracedRoot } from "../../core/tracing.js";
import { holdTracing } from "../../observability/tracing.js";
import { collectGarbage } from "../../registry/data-plane/garbage-collector.js";
import { bindBlobStore } from "../../storage/blob-store-identity.js";
import { openBlobDriver } from "../../storage/blobs/open-blob-driver.js";
import type { CommandOutput } from "./command-output.js";
import { createGcProgress } from "./gc-progress.js";

/**
 * `wharf gc`: one garbage collection run against the configured store and blob storage (safe while
 * servers are pushing; see `collectGarbage`). Shows its progress on `out.stderr` (createGcProgress)
 * and prints what it removed as one JSON line on `out.stdout` (with `--dry-run`, what a run would
 * remove now, `"dryRun": true`, removing nothing). Refuses,
 * deleting nothing, when the blob storage belongs to another database (`BlobStoreMismatchError`).
 * With OpenTelemetry configured, the run is a `gc` trace (ADR 0042), exported before it returns.
 */
export async function runGc(
  input: ConfigInput,
  opts: { window: string; grace: string; dryRun?: boolean },
  out: CommandOutput,
): Promise<number> {
  const config = loadConfig(input);
  const durationMs = (flag: string, value: string) => {
    const seconds = parseDurationSeconds(value);
    if (seconds === undefined)
      throw new ConfigError(`--${flag} must be a duration like 720h or 30m (got "${value}")`);
    return seconds * 1000;
  };
  const options = {
    historyWindowMs: durationMs("window", opts.window),
    graceMs: durationMs("grace", opts.grace),
    dryRun: opts.dryRun === true,
  };
  const tracing = await holdTracing();
  const store = await openConfiguredStore(config);
  const blobs = await openBlobDriver(config.blobStore, config.dataDir);
  try {
    // A blob store of another database would lose every blob that database does not know of.
    await bindBlobStore(store, blobs, storageLocationsOf(config));
    const progress = createGcProgress(out.stderr, Date.now, { dryRun: options.dryRun });
    try {
      const report = await tracedRoot("gc", {}, () =>
        collectGarbage(
          { store, blobs, clock: systemClock },
          { ...options, onProgress: (p) => progress.update(p) },
        ),
      );
      const removed = report.manifests + report.links + report.blobs + report.uploads + report.strayObjects;
      progress.finish({ removed, bytesFreed: report.bytes });
      out.stdout.write(`${JSON.stringify(options.dryRun ? { ...report, dryRun: true } : report)}\n`);
      return 0;
    } catch (err) {
      progress.close();
      throw err;
    }
  } finally {
    await Promise.allSettled([store.close(), blobs.close()]);
    await tracing.release();
  }
}
