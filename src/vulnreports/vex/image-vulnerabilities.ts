import type { ImageFinding, ImageVulnerabilities } from "../../registry/supply-chain/supply-chain.js";
import type { Store } from "../../storage/store.js";
import type { VulnMatchRecord } from "../../storage/vuln-report-store.js";

/** Most current reports read for one image (one per scanner; room for scanners to come). */
const CURRENT_REPORTS_LIMIT = 16;

/** Whether a match has a fix: fix state FIXED, or fix versions given. */
export function isFixable(match: Pick<VulnMatchRecord, "fixState" | "fixVersions">): boolean {
  return match.fixState === "FIXED" || match.fixVersions.length > 0;
}

/** A stored match as the policy evaluator reads it. */
export function findingOf(match: VulnMatchRecord): ImageFinding {
  return {
    vulnerabilityId: match.vulnerabilityId,
    severity: match.severity,
    fixable: isFixable(match),
    packageName: match.packageName,
    packageVersion: match.packageVersion,
  };
}

/**
 * Builds {@link ImageVulnerabilities} over the stored reports: the findings of the current report
 * of every scanner of (repo, digest), in two store reads (the current reports, their matches).
 */
export function createImageVulnerabilities(deps: {
  store: Pick<Store, "vulnReports">;
}): ImageVulnerabilities {
  const { store } = deps;
  return {
    async unsuppressedFindings(repoUid, digest) {
      const rows = await store.vulnReports.list(
        { repoUid, digests: [digest], currentOnly: true },
        CURRENT_REPORTS_LIMIT,
      );
      if (rows.length === 0) return undefined;
      const matches = await store.vulnReports.matches(rows.map((r) => r.uid));
      return rows.flatMap((r) => (matches.get(r.uid) ?? []).map(findingOf));
    },
  };
}
