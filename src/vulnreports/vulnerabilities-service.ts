import { Code } from "@connectrpc/connect";
import { fromTimestamp, toTimestamp } from "../core/api-convert.js";
import type { AccessScopes } from "../core/context.js";
import { DomainError, invalidArgument } from "../core/errors.js";
import type { ServiceHandlers } from "../core/service.js";
import { isAncestorOrSelf } from "../core/uidp.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { Vulnerabilities } from "../gen/platform/registry/v1/vulnerabilities_pb.js";
import { parseDigest } from "../registry/digest.js";
import { validateDigest } from "../registry/names.js";
import { blobKey } from "../storage/blobs/blob-layout.js";
import type { VulnReportFilter } from "../storage/vuln-report-store.js";
import { countSeries } from "./count-series.js";
import { ingestVulnReport } from "./ingest.js";
import type { RawReportLinker } from "./raw-report-link.js";
import { imageVulnReportMessage } from "./report-mapping.js";
import type { VulnReportServiceDeps } from "./service-deps.js";
import { reportVerdicts } from "./vex/report-verdicts.js";

/**
 * Most reports one ListVulnReports answers (v1 lists have no paging); newest first. Past it the call
 * fails FAILED_PRECONDITION (V1_LIST_TOO_LARGE) instead of answering a silent subset.
 */
export const LIST_VULN_REPORTS_LIMIT = 200;

/** Raw reports larger than this are not inlined in GetRawVulnReport: its answer links to them. */
export const RAW_INLINE_LIMIT = 64 * 1024 * 1024;

const SCANNERS = new Set(["GRYPE", "TRIVY"]);

function validateScanner(scanner: string): void {
  if (scanner !== "" && !SCANNERS.has(scanner))
    throw invalidArgument("scanner", "scanner must be GRYPE or TRIVY");
}

function inScopes(scopes: AccessScopes, uid: string): boolean {
  return scopes.all || scopes.uids.some((root) => isAncestorOrSelf(root, uid));
}

/**
 * The v1 Vulnerabilities service: upload (CreateVulnReport; its REST form is a plain route taking
 * the raw body, see vuln-report-routes.ts), list, daily counts and raw reports. Lists see only the
 * reports of the organizations where the caller holds CAP_VULN_REPORT_LIST.
 */
export function createVulnerabilitiesService(
  deps: VulnReportServiceDeps & {
    /** The expiring `rawReportUrl` of a raw report over {@link RAW_INLINE_LIMIT}. */
    rawReportLink: RawReportLinker;
  },
): ServiceHandlers<typeof Vulnerabilities> {
  const { store } = deps;
  return {
    async createVulnReport(req, ctx) {
      const { row, matches, verdicts } = await ingestVulnReport(deps, ctx, {
        repoUid: req.repoUid,
        digest: req.digest,
        source: req.rawReport,
      });
      return imageVulnReportMessage(row, matches, "summary", verdicts);
    },

    async listVulnReports(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_VULN_REPORT_LIST]);
      validateScanner(req.scanner);
      const filter: VulnReportFilter = { within };
      if (req.scanner) filter.scanner = req.scanner;
      const since = fromTimestamp(req.createdSince);
      if (since !== undefined) filter.createdSince = since;
      if (req.digest) {
        validateDigest(req.digest);
        filter.digests = [req.digest];
      } else if (req.repoId) {
        filter.repoUid = req.repoId;
        if (req.tag) {
          const tag = inScopes(within, req.repoId)
            ? await store.tags.getByName(req.repoId, req.tag)
            : undefined;
          filter.digests = tag ? [tag.digest] : [];
        }
      } else if (req.tag) {
        throw invalidArgument("tag", "tag needs repo_id");
      }
      const rows = await store.vulnReports.list(filter, LIST_VULN_REPORTS_LIMIT + 1);
      if (rows.length > LIST_VULN_REPORTS_LIMIT) {
        throw new DomainError(
          Code.FailedPrecondition,
          `Precondition failed: ListVulnReports would answer more than ${LIST_VULN_REPORTS_LIMIT} reports; narrow it with digest, tag, scanner or created_since`,
          { reason: "V1_LIST_TOO_LARGE" },
        );
      }
      const matches = await store.vulnReports.matches(rows.map((r) => r.uid));
      const verdicts = await reportVerdicts(store, rows, matches);
      return {
        items: rows.map((r) =>
          imageVulnReportMessage(r, matches.get(r.uid) ?? [], "full", verdicts.get(r.uid)),
        ),
      };
    },

    async listVulnCountReports(req, ctx) {
      return { items: await countSeries(deps, ctx, req, "daily") };
    },

    async listVulnCountReportsCumulative(req, ctx) {
      return { items: await countSeries(deps, ctx, req, "cumulative") };
    },

    async getRawVulnReport(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_VULN_REPORT_LIST]);
      validateDigest(req.digest);
      if (!SCANNERS.has(req.scanner)) throw invalidArgument("scanner", "scanner must be GRYPE or TRIVY");
      const createTime = fromTimestamp(req.createdAt);
      if (createTime === undefined) throw invalidArgument("created_at", "created_at is required");
      const row = await store.vulnReports.find({
        digest: req.digest,
        scanner: req.scanner,
        createTime,
        within,
      });
      // v1 answers a report that is missing or not the caller's alike: an empty 200.
      if (!row) return {};
      const report = { digest: row.digest, scanner: row.scanner, createdAt: toTimestamp(row.createTime) };
      if (row.rawSize > RAW_INLINE_LIMIT) {
        return { ...report, rawReport: "", rawReportUrl: await deps.rawReportLink(row.rawDigest) };
      }
      const stream = await deps.blobs.read(blobKey(parseDigest(row.rawDigest)));
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      return { ...report, rawReport: Buffer.concat(chunks).toString("utf8"), rawReportUrl: "" };
    },
  };
}
