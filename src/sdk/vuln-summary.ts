import {
  Fix_State,
  Vulnerability_Severity as Severity,
  type VulnerabilityMatch,
} from "../gen/platform/registry/v1/registry_pb.js";

// Summaries of a vulnerability report's matches (the tenant view of GetVulnReport), shared by the
// CLI and the web console.

/** The severities of the tenant view, worst first, as the CLI and the console write them. */
export const SEVERITY_NAMES = ["critical", "high", "medium", "low", "unknown"] as const;

/** One of {@link SEVERITY_NAMES}. */
export type SeverityName = (typeof SEVERITY_NAMES)[number];

/** The report severity of each name. */
export const SEVERITY_BY_NAME: Readonly<Record<SeverityName, Severity>> = {
  critical: Severity.CRITICAL,
  high: Severity.HIGH,
  medium: Severity.MEDIUM,
  low: Severity.LOW,
  unknown: Severity.UNKNOWN,
};

/** The CLI name of a report severity (`high`); an unknown number reads as `unknown`. */
export function severityName(severity: Severity): SeverityName {
  return SEVERITY_NAMES.find((name) => SEVERITY_BY_NAME[name] === severity) ?? "unknown";
}

/** True when a fixed version is known for the match (its fix state FIXED, or versions listed). */
export function isFixable(match: VulnerabilityMatch): boolean {
  return match.fix?.state === Fix_State.FIXED || (match.fix?.versions.length ?? 0) > 0;
}

/** The filters of `vulns report`: a minimum severity, only fixable matches. */
export interface MatchFilter {
  minimumSeverity?: Severity | undefined;
  fixable?: boolean | undefined;
}

/** The matches that pass every filter that is set, in their order. */
export function filterMatches(
  matches: readonly VulnerabilityMatch[],
  filter: MatchFilter,
): VulnerabilityMatch[] {
  return matches.filter(
    (m) =>
      (filter.minimumSeverity === undefined ||
        (m.vulnerability?.severity ?? Severity.UNKNOWN) >= filter.minimumSeverity) &&
      (!filter.fixable || isFixable(m)),
  );
}

/** A line of a report's summary: the matches of one severity, and how many of them are fixable. */
export interface SeverityCount {
  severity: SeverityName;
  matches: number;
  fixable: number;
}

/** Matches and fixable matches per severity, worst first, every severity listed (0 included). */
export function summarize(matches: readonly VulnerabilityMatch[]): SeverityCount[] {
  const rows = SEVERITY_NAMES.map((severity) => ({ severity, matches: 0, fixable: 0 }));
  for (const m of matches) {
    const row = rows[SEVERITY_NAMES.indexOf(severityName(m.vulnerability?.severity ?? Severity.UNKNOWN))];
    if (!row) continue;
    row.matches += 1;
    if (isFixable(m)) row.fixable += 1;
  }
  return rows;
}

/**
 * The vulnerability ids of a report with the worst severity each has among its matches (a
 * vulnerability found in two packages is one id).
 */
export function vulnerabilityIds(matches: readonly VulnerabilityMatch[]): Map<string, SeverityName> {
  const worst = new Map<string, Severity>();
  for (const m of matches) {
    const id = m.vulnerability?.id;
    if (!id) continue;
    const severity = m.vulnerability?.severity ?? Severity.UNKNOWN;
    if ((worst.get(id) ?? -1) < severity) worst.set(id, severity);
  }
  return new Map([...worst].map(([id, s]) => [id, severityName(s)]));
}

/** Distinct vulnerability ids per severity name (only severities that occur). */
export function countBySeverity(
  matches: readonly VulnerabilityMatch[],
): Partial<Record<SeverityName, number>> {
  const counts: Partial<Record<SeverityName, number>> = {};
  for (const severity of vulnerabilityIds(matches).values()) counts[severity] = (counts[severity] ?? 0) + 1;
  return counts;
}
