import type { ChangeContext, EventRecorder } from "../events/event-recorder.js";
import { VulnSeverityRaisedSchema } from "../gen/platform/registry/v1/vulnerabilities_pb.js";
import type { Store } from "../storage/store.js";
import type { VulnMatchRecord, VulnReportRow } from "../storage/vuln-report-store.js";
import { type ReportVerdicts, unsuppressed } from "./vex/report-verdicts.js";

/** Most new vulnerabilities one severity_raised event carries. */
export const SEVERITY_RAISED_LIMIT = 100;
/** Most tags of one image told (one event each). */
const TAGS_LIMIT = 1000;

const RAISING = new Set(["CRITICAL", "HIGH"]);

/** Distinct unsuppressed CRITICAL and HIGH vulnerabilities, by id (the first match of each). */
function raising(matches: readonly VulnMatchRecord[]): Map<string, VulnMatchRecord> {
  const out = new Map<string, VulnMatchRecord>();
  for (const m of matches)
    if (RAISING.has(m.severity) && !out.has(m.vulnerabilityId)) out.set(m.vulnerabilityId, m);
  return out;
}

function count(vulns: Map<string, VulnMatchRecord>, severity: string): number {
  return [...vulns.values()].filter((m) => m.severity === severity).length;
}

/** The report a new one is compared with, with its matches and their VEX verdicts. */
export interface PreviousReport {
  row: VulnReportRow;
  matches: readonly VulnMatchRecord[];
  verdicts: ReportVerdicts;
}

/**
 * Records `dev.wharf.api.registry.vuln_report.severity_raised.v1` (ADR 0059), in `tx`, once per tag
 * of the report's image (subject: the tag), when the new report `row` has more unsuppressed
 * CRITICAL or more unsuppressed HIGH vulnerabilities (distinct ids) than `previous`, the report of
 * the same digest and scanner it replaced. No previous report (a first scan): nothing. The body
 * lists the CRITICAL and HIGH vulnerabilities the previous report did not have, at most
 * {@link SEVERITY_RAISED_LIMIT}. Resolves with how many events were recorded.
 */
export async function recordSeverityRaised(
  tx: Store,
  events: EventRecorder,
  ctx: ChangeContext,
  args: {
    repo: { uid: string; name: string };
    row: VulnReportRow;
    matches: readonly VulnMatchRecord[];
    verdicts: ReportVerdicts;
    previous: PreviousReport | undefined;
  },
): Promise<number> {
  const { previous, row } = args;
  if (!previous) return 0;
  const before = raising(unsuppressed(previous.matches, previous.verdicts));
  const now = raising(unsuppressed(args.matches, args.verdicts));
  const counts = (v: Map<string, VulnMatchRecord>) => ({
    critical: BigInt(count(v, "CRITICAL")),
    high: BigInt(count(v, "HIGH")),
  });
  const was = counts(before);
  const is = counts(now);
  if (is.critical <= was.critical && is.high <= was.high) return 0;
  const added = [...now.values()].filter((m) => !before.has(m.vulnerabilityId));
  const tags = await tx.tags.list(
    { uidp: { childrenOf: args.repo.uid }, digest: row.digest },
    { order: { field: "uid", desc: false }, limit: TAGS_LIMIT, skip: 0 },
  );
  for (const tag of tags.rows.slice(0, TAGS_LIMIT)) {
    await events.change(tx, ctx, {
      resource: "vulnReport",
      verb: "severity_raised",
      subject: tag.uid,
      group: args.repo.uid,
      schema: VulnSeverityRaisedSchema,
      body: {
        repoId: args.repo.uid,
        repo: args.repo.name,
        tag: tag.name,
        digest: row.digest,
        reportId: row.uid,
        scanner: row.scanner,
        previous: was,
        current: is,
        newVulnerabilities: added.slice(0, SEVERITY_RAISED_LIMIT).map((m) => ({
          id: m.vulnerabilityId,
          severity: m.severity,
          packageName: m.packageName,
          packageVersion: m.packageVersion,
          fixedVersions: m.fixVersions,
        })),
        truncated: added.length > SEVERITY_RAISED_LIMIT,
      },
    });
  }
  return Math.min(tags.rows.length, TAGS_LIMIT);
}
