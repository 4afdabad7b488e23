import type { ImageFinding, ImageVulnerabilities } from "../../registry/supply-chain/supply-chain.js";
import type { Store } from "../../storage/store.js";
import { imageKey } from "../../storage/vex-store.js";
import type { VulnMatchRecord } from "../../storage/vuln-report-store.js";
import { vexVerdicts } from "./applicability.js";

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
    ...(match.fixVersions.length > 0 ? { fixedVersion: match.fixVersions.join(", ") } : {}),
  };
}

/**
 * Builds {@link ImageVulnerabilities} over the stored reports: the findings of the current report
 * of every scanner of (repo, digest) that no VEX statement suppresses (see `vexVerdicts`), in
 * three store reads (the current reports, their matches, the image's applicable statements).
 */
export function createImageVulnerabilities(deps: {
  store: Pick<Store, "vulnReports" | "vex">;
}): ImageVulnerabilities {
  const { store } = deps;
  return {
    async unsuppressedFindings(repoUid, digest) {
      const rows = await store.vulnReports.list(
        { repoUid, digests: [digest], currentOnly: true },
        CURRENT_REPORTS_LIMIT,
      );
      if (rows.length === 0) return undefined;
      const [matches, statements] = await Promise.all([
        store.vulnReports.matches(rows.map((r) => r.uid)),
        store.vex.applicable([{ repoUid, digest }]),
      ]);
      const all = rows.flatMap((r) => matches.get(r.uid) ?? []);
      const verdicts = vexVerdicts(all, statements.get(imageKey(repoUid, digest)) ?? []);
      return all.filter((_, i) => !verdicts[i]?.suppressed).map(findingOf);
    },
  };
}
