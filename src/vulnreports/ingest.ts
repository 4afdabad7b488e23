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
import { type PreviousReport, recordSeverityRaised } from "./severity-raised.js";
import { type ReportVerdicts, reportVerdicts } from "./vex/report-verdicts.js";

/** A stored report with its matches and VEX's verdicts on them. */
export interface IngestedReport {
  row: VulnReportRow;
  matches: VulnMatchRecord[];
  verdicts: ReportVerdicts;
}

/** The current report of (repo, digest, scanner) before a new one replaces it, VEX applied. */
async function currentReport(
  tx: Store,
  repoUid: string,
  digest: string,
  scanner: string,
): Promise<PreviousReport | undefined> {
  const row = await tx.vulnReports.current(repoUid, digest, scanner);
  if (!row) return undefined;
  const matches = await tx.vulnReports.matches([row.uid]);
  const verdicts = await reportVerdicts(tx, [row], matches);
  return { row, matches: matches.get(row.uid) ?? [], verdicts: verdicts.get(row.uid) ?? [] };
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
 * `registry.vuln_report.created` event, and a `severity_raised` one per tag of the image when it
 * has more critical or high unsuppressed vulnerabilities than the report it replaced (ADR 0059).
 * NOT_FOUND when the repo or the manifest is missing;
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
  const repo = await deps.store.repos.get(repoUid);
  if (!repo) throw notFound("repo", repoUid);
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
    const previous = await currentReport(tx, repoUid, digest, parsed.scanner.name);
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
    const verdicts = (await reportVerdicts(tx, [row], new Map([[row.uid, matches]]))).get(row.uid) ?? [];
    // The created event is recorded here, before the severity_raised ones it causes, so receivers
    // see them in that order and the call's audit record names the report (the first change).
    await deps.events.change(tx, ctx, {
      resource: "vulnReport",
      verb: "created",
      subject: row.uid,
      group: repoUid,
      schema: ImageVulnReportSchema,
      // The event carries the report without its vulnerabilities: a report can hold thousands.
      body: imageVulnReportMessage(row, matches, "summary", verdicts),
    });
    await recordSeverityRaised(tx, deps.events, ctx, { repo, row, matches, verdicts, previous });
    return { row, matches, verdicts };
  };
  return recordedMutation(deps, ctx, write, () => undefined);
}
