import { create } from "@bufbuild/protobuf";
import { toTimestamp } from "../core/api-convert.js";
import {
  Fix_State,
  Vulnerability_Severity,
  type VulnReport,
  VulnReportSchema,
} from "../gen/platform/registry/v1/registry_pb.js";
import {
  type ImageVulnerability,
  ImageVulnerability_Severity,
  ImageVulnerabilitySchema,
  type ImageVulnReport,
  ImageVulnReportSchema,
  ScannerInfo_Name,
} from "../gen/platform/registry/v1/vulnerabilities_pb.js";
import type { VulnMatchRecord, VulnReportRow } from "../storage/vuln-report-store.js";
import { SEVERITIES, type VulnSeverity } from "./report-model.js";
import type { ReportVerdicts } from "./vex/report-verdicts.js";
import { vexStatementMessage } from "./vex/vex-mapping.js";

function severityRank(severity: string): number {
  return SEVERITIES.indexOf(severity as VulnSeverity);
}

/** The list-shape severity enum of a stored severity name. */
export function imageSeverity(severity: string): ImageVulnerability_Severity {
  return ImageVulnerability_Severity[severity as keyof typeof ImageVulnerability_Severity] ?? 0;
}

function fixState(state: string): Fix_State {
  return Fix_State[state as keyof typeof Fix_State] ?? Fix_State.UNKNOWN;
}

/**
 * The matches of a report grouped by vulnerability id, in order of first appearance: the packages
 * it was found in become purls and locations; aliases, fix versions, URLs and CVSS are merged; the
 * severity is the highest any match gave; the fix state is the first match's. With `verdicts`
 * (VEX's, per match): `suppressed` when every match of the vulnerability is, and `vex` the
 * statement of its first suppressed match, else of its first match a statement covers.
 */
export function groupByVulnerability(
  matches: readonly VulnMatchRecord[],
  verdicts?: ReportVerdicts,
): ImageVulnerability[] {
  const byId = new Map<string, { first: VulnMatchRecord; all: VulnMatchRecord[]; indices: number[] }>();
  for (const [i, m] of matches.entries()) {
    const entry = byId.get(m.vulnerabilityId);
    if (entry) {
      entry.all.push(m);
      entry.indices.push(i);
    } else byId.set(m.vulnerabilityId, { first: m, all: [m], indices: [i] });
  }
  const union = (pick: (m: VulnMatchRecord) => readonly string[], all: VulnMatchRecord[]) => [
    ...new Set(all.flatMap(pick).filter((v) => v !== "")),
  ];
  return [...byId.values()].map(({ first, all, indices }) => {
    const own = indices.map((i) => verdicts?.[i]);
    const decider = own.find((v) => v?.suppressed) ?? own.find((v) => v !== undefined);
    const top = all.reduce((a, b) => (severityRank(b.severity) > severityRank(a.severity) ? b : a));
    const cvss = new Map<string, { score: string; version: string }>();
    for (const c of all.flatMap((m) => m.cvss)) {
      const key = `${c.version}|${c.score}`;
      if (!cvss.has(key)) cvss.set(key, { score: String(c.score), version: c.version });
    }
    return create(ImageVulnerabilitySchema, {
      id: first.vulnerabilityId,
      aliases: union((m) => m.aliases, all),
      purls: union((m) => [m.purl], all),
      description: first.description,
      details: "",
      severity: imageSeverity(top.severity),
      cvss: [...cvss.values()],
      fix: { versions: union((m) => m.fixVersions, all), state: fixState(first.fixState) },
      relatedUrls: union((m) => m.relatedUrls, all),
      locations: union((m) => m.locations, all),
      suppressed: own.every((v) => v?.suppressed === true),
      ...(decider ? { vex: vexStatementMessage(decider.statement) } : {}),
    });
  });
}

/**
 * Distinct vulnerability ids with a match VEX does not suppress (`vulnerabilities`), and those
 * suppressed in every match (`suppressed`).
 */
export function vulnerabilityCounts(
  matches: readonly VulnMatchRecord[],
  verdicts?: ReportVerdicts,
): { vulnerabilities: number; suppressed: number } {
  const open = new Set<string>();
  const all = new Set<string>();
  for (const [i, m] of matches.entries()) {
    all.add(m.vulnerabilityId);
    if (!verdicts?.[i]?.suppressed) open.add(m.vulnerabilityId);
  }
  return { vulnerabilities: open.size, suppressed: all.size - open.size };
}

/**
 * The list shape of a stored report (`matches` grouped by vulnerability, see
 * {@link groupByVulnerability}), VEX applied through `verdicts`: `vulnerability_count` counts the
 * unsuppressed vulnerabilities, `suppressed_count` the others. `summary`: without the
 * vulnerabilities, only their counts (what an upload answers and its event carries).
 */
export function imageVulnReportMessage(
  row: VulnReportRow,
  matches: readonly VulnMatchRecord[],
  view: "full" | "summary" = "full",
  verdicts?: ReportVerdicts,
): ImageVulnReport {
  const vulnerabilities = view === "full" ? groupByVulnerability(matches, verdicts) : [];
  const counts = vulnerabilityCounts(matches, verdicts);
  return create(ImageVulnReportSchema, {
    digest: row.digest,
    scanner: {
      name: ScannerInfo_Name[row.scanner as keyof typeof ScannerInfo_Name] ?? ScannerInfo_Name.UNKNOWN,
      version: row.scannerVersion,
      dbBuildTime: toTimestamp(row.dbBuildTime),
    },
    createdAt: toTimestamp(row.createTime),
    vulnerabilities,
    vulnerabilityCount: BigInt(counts.vulnerabilities),
    suppressedCount: BigInt(counts.suppressed),
    repoId: row.repoUid,
    current: row.current,
    id: row.uid,
  });
}

/**
 * The tenant shape of a stored report: one entry per match, each with VEX's verdict (`suppressed`,
 * the deciding statement). NEGLIGIBLE reads as LOW there (the tenant enum has no such level);
 * `generation` is the report's place in its history (1 = first).
 */
export function tenantVulnReportMessage(
  row: VulnReportRow,
  matches: readonly VulnMatchRecord[],
  generation: number,
  verdicts?: ReportVerdicts,
): VulnReport {
  const counts = vulnerabilityCounts(matches, verdicts);
  return create(VulnReportSchema, {
    id: row.uid,
    vulnerabilityDbLastBuildTime: toTimestamp(row.dbBuildTime),
    vulnerabilityCount: BigInt(counts.vulnerabilities),
    suppressedCount: BigInt(counts.suppressed),
    vulnerabilityMatches: matches.map((m, i) => {
      const verdict = verdicts?.[i];
      return {
        vulnerability: {
          id: m.vulnerabilityId,
          displayId: m.vulnerabilityId,
          description: m.description,
          severity:
            m.severity === "NEGLIGIBLE"
              ? Vulnerability_Severity.LOW
              : (Vulnerability_Severity[m.severity as keyof typeof Vulnerability_Severity] ?? 0),
          source: m.relatedUrls[0] ?? "",
          cvss: m.cvss.map((c) => ({ score: c.score, version: c.version })),
          relatedUrls: m.relatedUrls,
          relatedVulnerabilities: m.aliases.map((id) => ({ id, source: "" })),
        },
        pkg: { name: m.packageName, version: m.packageVersion, purl: m.purl },
        fix: { versions: m.fixVersions, state: fixState(m.fixState) },
        suppressed: verdict?.suppressed === true,
        ...(verdict ? { vex: vexStatementMessage(verdict.statement) } : {}),
      };
    }),
    scanner: { name: row.scanner, version: row.scannerVersion },
    reportGeneration: BigInt(generation),
    lastSeen: toTimestamp(row.createTime),
  });
}
