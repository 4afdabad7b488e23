import {
  Fix_State,
  Vulnerability_Severity as Severity,
  type VulnerabilityMatch,
} from "../../gen/platform/registry/v1/registry_pb.js";
import { UsageError } from "./output.js";

/** The severities of the tenant view, worst first, as the CLI writes them. */
export const SEVERITY_NAMES = ["critical", "high", "medium", "low", "unknown"] as const;

/** One of {@link SEVERITY_NAMES}. */
export type SeverityName = (typeof SEVERITY_NAMES)[number];

const BY_NAME: Record<SeverityName, Severity> = {
  critical: Severity.CRITICAL,
  high: Severity.HIGH,
  medium: Severity.MEDIUM,
  low: Severity.LOW,
  unknown: Severity.UNKNOWN,
};

/** The CLI name of a report severity (`high`); an unknown number reads as `unknown`. */
export function severityName(severity: Severity): SeverityName {
  return SEVERITY_NAMES.find((name) => BY_NAME[name] === severity) ?? "unknown";
}

/**
 * Parses `--severity`: a MINIMUM severity (`high` keeps high and critical), case-insensitive.
 * Usage error for anything else.
 */
export function parseMinimumSeverity(value: string): Severity {
  const name = value.trim().toLowerCase();
  if (!(SEVERITY_NAMES as readonly string[]).includes(name))
    throw new UsageError(`--severity must be one of ${SEVERITY_NAMES.join(", ")} (got "${value}")`);
  return BY_NAME[name as SeverityName];
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

/** Counts as a short cell, worst first: `critical 1, high 2` ("none" when empty). */
export function countsCell(counts: Partial<Record<string, number>> | undefined): string {
  if (counts === undefined) return "";
  const parts = SEVERITY_NAMES.filter((s) => (counts[s] ?? 0) > 0).map((s) => `${s} ${counts[s]}`);
  return parts.length === 0 ? "none" : parts.join(", ");
}

/** A vulnerability only one of two reports has: `-` only the first, `+` only the second. */
export interface VulnerabilityChange {
  change: "-" | "+";
  id: string;
  severity: SeverityName;
}

/**
 * The vulnerability ids only one of two reports has: removed (`-`) first then added (`+`), each
 * sorted worst severity first, then by id.
 */
export function vulnerabilityChanges(
  first: readonly VulnerabilityMatch[],
  second: readonly VulnerabilityMatch[],
): VulnerabilityChange[] {
  const a = vulnerabilityIds(first);
  const b = vulnerabilityIds(second);
  const only = (from: Map<string, SeverityName>, other: Map<string, SeverityName>, change: "-" | "+") =>
    [...from]
      .filter(([id]) => !other.has(id))
      .map(([id, severity]) => ({ change, id, severity }))
      .sort(
        (x, y) =>
          SEVERITY_NAMES.indexOf(x.severity) - SEVERITY_NAMES.indexOf(y.severity) || x.id.localeCompare(y.id),
      );
  return [...only(a, b, "-"), ...only(b, a, "+")];
}
