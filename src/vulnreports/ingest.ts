import { createHash } from "node:crypto";
import { PassThrough } from "node:stream";
import { Code } from "@connectrpc/connect";
import { DomainError, invalidArgument, notFound, unavailable } from "../core/errors.js";
import { newChildUid } from "../core/uidp.js";
import type { ChangeContext } from "../events/event-recorder.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import { ImageVulnReportSchema } from "../gen/platform/registry/v1/vulnerabilities_pb.js";
import { withRegistryLock } from "../registry/data-plane/registry-lock.js";
import { parseDigest } from "../registry/digest.js";
import { validateDigest } from "../registry/names.js";
import { blobKey, newUploadId, uploadKey } from "../storage/blobs/blob-layout.js";
import type { Store } from "../storage/store.js";
import type { VulnMatchRecord, VulnReportRow } from "../storage/vuln-report-store.js";
import { VulnReportFormatError } from "./formats/format-error.js";
import type { JsonSource } from "./formats/json-paths.js";
import { parseVulnReport } from "./formats/parse-report.js";
import { imageVulnReportMessage } from "./report-mapping.js";
import type { NormalizedReport } from "./report-model.js";
import { DEFAULT_VULN_REPORT_MAX_BYTES, type VulnReportServiceDeps } from "./service-deps.js";

/** A stored report with its matches. */
export interface IngestedReport {
  row: VulnReportRow;
  matches: VulnMatchRecord[];
}

function tooLarge(limit: number): DomainError {
  return new DomainError(
    Code.ResourceExhausted,
    `Resource exhausted: the report is larger than ${limit} bytes`,
    {
      reason: "RESOURCE_EXHAUSTED",
    },
  );
}

async function* bytesOf(source: JsonSource): AsyncIterable<Uint8Array> {
  if (source instanceof Uint8Array) yield source;
  else yield* source;
}

/**
 * Reads `source` once: parses it, hashes it and writes it to a temporary blob key at the same time,
 * so neither the bytes nor a DOM of them are ever held whole. Resolves with the parse, the digest and
 * size of the bytes, and the temporary key holding them (the caller commits or deletes it).
 */
async function readReport(
  deps: VulnReportServiceDeps,
  source: JsonSource,
): Promise<{ parsed: NormalizedReport; rawDigest: string; rawSize: number; tempKey: string }> {
  const limit = deps.vulnReportMaxBytes ?? DEFAULT_VULN_REPORT_MAX_BYTES;
  const tempKey = uploadKey(newUploadId());
  const hash = createHash("sha256");
  const toBlob = new PassThrough();
  const written = deps.blobs.put(tempKey, toBlob);
  // A failed write surfaces when awaited below; until then it must not be an unhandled rejection.
  written.catch(() => {});
  let size = 0;
  async function* tee(): AsyncIterable<Uint8Array> {
    for await (const chunk of bytesOf(source)) {
      size += chunk.length;
      if (size > limit) throw tooLarge(limit);
      hash.update(chunk);
      if (!toBlob.write(chunk)) await new Promise((resolve) => toBlob.once("drain", resolve));
      yield chunk;
    }
  }
  try {
    const parsed = await parseVulnReport(tee());
    toBlob.end();
    await written;
    return { parsed, rawDigest: `sha256:${hash.digest("hex")}`, rawSize: size, tempKey };
  } catch (err) {
    toBlob.destroy();
    await written.catch(() => {});
    await deps.blobs.delete(tempKey);
    if (err instanceof VulnReportFormatError) throw invalidArgument("raw_report", err.message);
    throw err;
  }
}

/**
 * Stores a scanner report of image `digest` in repo `repoUid` as the current report of its scanner
 * (the previous one becomes history), with the raw bytes in blob storage, and records a
 * `registry.vuln_report.created` event. NOT_FOUND when the repo or the manifest is missing;
 * INVALID_ARGUMENT for a bad digest or a report in no format Wharf reads (nothing is stored);
 * RESOURCE_EXHAUSTED past the size limit.
 */
export async function ingestVulnReport(
  deps: VulnReportServiceDeps,
  ctx: ChangeContext,
  args: { repoUid: string; digest: string; source: JsonSource },
): Promise<IngestedReport> {
  const { repoUid, digest } = args;
  validateDigest(digest);
  if (!(await deps.store.repos.get(repoUid))) throw notFound("repo", repoUid);
  if (!(await deps.store.manifests.has(repoUid, digest))) throw notFound("manifest", digest);
  const { parsed, rawDigest, rawSize, tempKey } = await readReport(deps, args.source);
  const key = blobKey(parseDigest(rawDigest));
  try {
    await deps.blobs.commit(tempKey, key);
  } finally {
    await deps.blobs.delete(tempKey);
  }
  const matches: VulnMatchRecord[] = parsed.matches;
  const write = async (tx: Store): Promise<IngestedReport> => {
    await withRegistryLock(tx, "shared");
    // Under the registry lock garbage collection cannot run; if it removed these bytes before
    // (an earlier orphan of the same digest), the report must not point at nothing.
    if (!(await deps.blobs.stat(key)))
      throw unavailable("the report's bytes were collected meanwhile; upload it again");
    const now = ctx.clock.now();
    const row = await tx.vulnReports.insert(
      {
        uid: newChildUid(repoUid),
        repoUid,
        digest,
        scanner: parsed.scanner.name,
        scannerVersion: parsed.scanner.version,
        ...(parsed.scanner.dbBuildTime !== undefined ? { dbBuildTime: parsed.scanner.dbBuildTime } : {}),
        envelope: parsed.envelope,
        rawDigest,
        rawSize,
        matchCount: matches.length,
        createTime: now,
      },
      matches,
    );
    return { row, matches };
  };
  return recordedMutation(deps, ctx, write, ({ row }) => ({
    resource: "vulnReport",
    verb: "created",
    subject: row.uid,
    group: repoUid,
    schema: ImageVulnReportSchema,
    // The event carries the report without its vulnerabilities: a report can hold thousands.
    body: imageVulnReportMessage(row, matches, "summary"),
  }));
}
