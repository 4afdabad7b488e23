import { recordedIssuerUrls } from "../../auth/issuer-urls.js";
import { type ConfigInput, loadConfig, publicUrlOf } from "../../config/config.js";
import { openConfiguredStore } from "../../config/open-configured-store.js";
import { systemClock } from "../../core/clock.js";
import { createEventRecorder } from "../../events/event-recorder.js";
import { checkIntegrity, type IntegrityReport } from "../../registry/data-plane/integrity-check.js";
import { createRegistryContent } from "../../registry/data-plane/registry-content.js";
import { openBlobDriver } from "../../storage/blobs/open-blob-driver.js";
import type { CommandOutput } from "./command-output.js";

/**
 * `wharf fsck [--deep] [--repair] [--json]`: checks the configured deployment's metadata against
 * its blob storage while servers run (`checkIntegrity`): store ids (ADR 0016), every referenced
 * blob's presence and size (and digest with `--deep`), every tag's manifest; lists orphans. Prints
 * a summary (or, with `--json`, the whole report as one JSON document) on `out.stdout`, progress on
 * `out.stderr`. Exits 1 when damage remains, 0 otherwise (orphans are no damage). `--repair`
 * deletes dangling tags through the registry's tag delete (tag history, `tag.deleted` events) and
 * leaves orphans to garbage collection; it never deletes referenced data. Unlike the other
 * commands it does not bind or refuse a blob store of another database: it reports the mismatch.
 */
export async function runFsck(
  input: ConfigInput,
  opts: { deep: boolean; repair: boolean; json: boolean },
  out: CommandOutput,
): Promise<number> {
  const config = loadConfig(input);
  const store = await openConfiguredStore(config);
  const blobs = await openBlobDriver(config.blobStore, config.dataDir);
  try {
    const recorded = await recordedIssuerUrls(store.settings);
    const events = createEventRecorder({
      apiUrl: config.publicUrl || recorded.apiUrl || publicUrlOf("", config.apiAddr),
      registryUrl: config.registryUrl || recorded.registryUrl || publicUrlOf("", config.registryAddr),
    });
    const content = createRegistryContent({ store, blobs, clock: systemClock, events });
    const report = await checkIntegrity(
      { store, blobs },
      {
        deep: opts.deep,
        repair: opts.repair,
        deleteTag: (repoUid, name) => content.deleteTag(repoUid, name, undefined),
        onProgress: (line) => out.stderr.write(`wharf fsck: ${line}\n`),
      },
    );
    out.stdout.write(opts.json ? `${JSON.stringify(report, null, 1)}\n` : summaryOf(report, opts.repair));
    return report.damaged ? 1 : 0;
  } finally {
    await Promise.allSettled([store.close(), blobs.close()]);
  }
}

/** The human summary: one line per finding, then the totals. */
export function summaryOf(report: IntegrityReport, repair: boolean): string {
  const lines: string[] = [];
  const { storeIds } = report;
  if (!storeIds.match) {
    lines.push(
      `DAMAGE store ids differ: database ${storeIds.database ?? "(none)"}, blob store ${storeIds.blobStore ?? "(none)"} (ADR 0016)${repair ? "; nothing was repaired" : ""}`,
    );
  }
  for (const blob of report.damagedBlobs) {
    const what =
      blob.problem === "missing"
        ? "missing from blob storage"
        : blob.problem === "size"
          ? `holds ${blob.storedSize} bytes, recorded ${blob.recordedSize}`
          : blob.problem === "digest"
            ? `bytes hash to ${blob.actualDigest}`
            : "referenced but not recorded";
    lines.push(`DAMAGE blob ${blob.digest} ${what}`);
    for (const image of blob.images) lines.push(`  breaks ${image}`);
  }
  for (const tag of report.danglingTags) {
    lines.push(
      `${tag.repaired ? "REPAIRED" : "DAMAGE"} tag ${tag.image} names ${tag.digest}, which its repo does not hold${tag.repaired ? ": deleted" : ""}`,
    );
  }
  const { orphans } = report;
  for (const digest of orphans.examples.unreferencedBlobs)
    lines.push(`orphan blob ${digest} (no manifest references it)`);
  for (const key of orphans.examples.strayFiles) lines.push(`orphan file ${key} (no blob row)`);
  const shownOrphans = orphans.examples.unreferencedBlobs.length + orphans.examples.strayFiles.length;
  if (orphans.unreferencedBlobs + orphans.strayFiles > shownOrphans) {
    lines.push(
      `… and ${orphans.unreferencedBlobs + orphans.strayFiles - shownOrphans} more orphans (--json counts them all)`,
    );
  }
  const dangling = report.danglingTags.filter((t) => !t.repaired).length;
  const repaired = report.danglingTags.length - dangling;
  lines.push(
    `${report.damaged ? "damaged" : "clean"}: ${report.checkedBlobs} blobs checked${report.deep ? " (sizes and digests)" : " (sizes)"}, ${report.damagedBlobs.length} damaged${report.notFetchedBlobs > 0 ? `, ${report.notFetchedBlobs} not fetched yet by a pull-through cache` : ""}, ${dangling} dangling tags${repaired > 0 ? `, ${repaired} deleted` : ""}, ${orphans.unreferencedBlobs} unreferenced blobs and ${orphans.strayFiles} files with no row${repair && orphans.unreferencedBlobs + orphans.strayFiles > 0 ? " left for wharf gc (it removes those older than its --grace)" : ""}, store ids ${storeIds.match ? "match" : "differ"}`,
  );
  return `${lines.join("\n")}\n`;
}
