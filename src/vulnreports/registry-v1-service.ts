import { notFound } from "../core/errors.js";
import type { ServiceHandlers } from "../core/service.js";
import type { Registry } from "../gen/platform/registry/v1/registry_pb.js";
import { validateDigest } from "../registry/names.js";
import { tenantVulnReportMessage } from "./report-mapping.js";
import type { VulnReportServiceDeps } from "./service-deps.js";
import { reportVerdicts } from "./vex/report-verdicts.js";

/** Most history rows counted for a report's generation. */
const GENERATION_LIMIT = 10_000;

/**
 * The vulnerability report RPCs of the v1 Registry service (its repo, tag and EOL RPCs are bound
 * beside these in the composition root): GetVulnReport answers the current report of an image digest (the newest
 * of any scanner) in the tenant shape, VEX applied (ADR 0059); NOT_FOUND when the image has none. The transport has checked
 * the caller's capabilities at the repo.
 */
export function createRegistryV1VulnReportHandlers(
  deps: VulnReportServiceDeps,
): Pick<ServiceHandlers<typeof Registry>, "getVulnReport"> {
  const { store } = deps;
  return {
    async getVulnReport(req) {
      validateDigest(req.digest);
      const row = await store.vulnReports.current(req.repoUid, req.digest);
      if (!row) throw notFound("vuln_report", `${req.repoUid}@${req.digest}`);
      const history = await store.vulnReports.list(
        { repoUid: row.repoUid, digests: [row.digest], scanner: row.scanner },
        GENERATION_LIMIT,
      );
      const byReport = await store.vulnReports.matches([row.uid]);
      const verdicts = await reportVerdicts(store, [row], byReport);
      return tenantVulnReportMessage(row, byReport.get(row.uid) ?? [], history.length, verdicts.get(row.uid));
    },
  };
}
