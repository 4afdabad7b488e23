import type {
  Vulnerability_Severity as Severity,
  VulnerabilityMatch,
} from "../../gen/platform/registry/v1/registry_pb.js";
import {
  SEVERITY_BY_NAME,
  SEVERITY_NAMES,
  type SeverityName,
  vulnerabilityIds,
} from "../../sdk/vuln-summary.js";
import { UsageError } from "./output.js";

export {
  countBySeverity,
  filterMatches,
  isFixable,
  type MatchFilter,
  SEVERITY_NAMES,
  type SeverityCount,
  type SeverityName,
  severityName,
  summarize,
  vulnerabilityIds,
} from "../../sdk/vuln-summary.js";

/**
 * Parses `--severity`: a MINIMUM severity (`high` keeps high and critical), case-insensitive.
 * Usage error for anything else.
 */
export function parseMinimumSeverity(value: string): Severity {
  const name = value.trim().toLowerCase();
  if (!(SEVERITY_NAMES as readonly string[]).includes(name))
    throw new UsageError(`--severity must be one of ${SEVERITY_NAMES.join(", ")} (got "${value}")`);
  return SEVERITY_BY_NAME[name as SeverityName];
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
