import { filterMatches, SEVERITY_BY_NAME, type SeverityName } from "wharf/sdk";
import type { VulnReport } from "./image-details";

/** One vulnerability match of a report. */
export type VulnMatch = VulnReport["vulnerabilityMatches"][number];

/** The report table's filters: a minimum severity ("" = any) and fixable only. */
export interface VulnFilter {
  minimum: SeverityName | "";
  fixableOnly: boolean;
}

/** The matches passing `filter`, worst severity first, then by vulnerability id. */
export function visibleMatches(matches: readonly VulnMatch[], filter: VulnFilter): VulnMatch[] {
  return filterMatches(matches, {
    minimumSeverity: filter.minimum === "" ? undefined : SEVERITY_BY_NAME[filter.minimum],
    fixable: filter.fixableOnly,
  }).sort(
    (a, b) =>
      (b.vulnerability?.severity ?? 0) - (a.vulnerability?.severity ?? 0) ||
      (a.vulnerability?.id ?? "").localeCompare(b.vulnerability?.id ?? ""),
  );
}

/** Where a vulnerability id is described: the report's first http(s) link, else OSV for known id shapes. */
export function vulnerabilityLink(match: VulnMatch): string | undefined {
  const related = match.vulnerability?.relatedUrls.find((u) => /^https?:\/\//.test(u));
  if (related) return related;
  const source = match.vulnerability?.source ?? "";
  if (/^https?:\/\//.test(source)) return source;
  const id = match.vulnerability?.id ?? "";
  return /^(CVE|GHSA|GO|PYSEC|RUSTSEC|OSV)-/.test(id) ? `https://osv.dev/vulnerability/${id}` : undefined;
}
