import { DAY_MS, startOfDay } from "../core/utc-day.js";
import type { Store } from "../storage/store.js";
import type { VulnMatchRecord, VulnReportRow } from "../storage/vuln-report-store.js";
import { SEVERITIES, type VulnSeverity } from "./report-model.js";
import { reportVerdicts, unsuppressed } from "./vex/report-verdicts.js";

/** Most tag history rows read for one tag (years of daily pushes). */
const HISTORY_LIMIT = 100_000;

/** One vulnerability of an image on a day: its id, other ids, and its highest severity. */
export interface DayVulnerability {
  id: string;
  aliases: string[];
  severity: VulnSeverity;
}

/** What a tag resolved to at the end of one UTC day, and the vulnerabilities of that image. */
export interface TagDay {
  /** 00:00 UTC of the day (ms). */
  day: number;
  /** The digest the tag pointed to at the end of the day; "" when it resolved to nothing. */
  digest: string;
  /** The report used, when the image has one. */
  report?: VulnReportRow;
  /** By vulnerability id; empty without a report. */
  vulnerabilities: Map<string, DayVulnerability>;
}

function rank(severity: string): number {
  return SEVERITIES.indexOf(severity as VulnSeverity);
}

/** The matches of a report as one entry per vulnerability id (aliases merged, highest severity). */
export function vulnerabilitiesOf(matches: readonly VulnMatchRecord[]): Map<string, DayVulnerability> {
  const out = new Map<string, DayVulnerability>();
  for (const m of matches) {
    const severity = (rank(m.severity) < 0 ? "UNKNOWN" : m.severity) as VulnSeverity;
    const seen = out.get(m.vulnerabilityId);
    if (!seen) {
      out.set(m.vulnerabilityId, { id: m.vulnerabilityId, aliases: [...m.aliases], severity });
      continue;
    }
    for (const alias of m.aliases) if (!seen.aliases.includes(alias)) seen.aliases.push(alias);
    if (rank(severity) > rank(seen.severity)) seen.severity = severity;
  }
  return out;
}

/**
 * The report that describes `digest` at the end of a day: the newest one stored before the day
 * ended, or, when none was stored yet, the first one stored later (an image scanned after the day
 * still had those vulnerabilities then). Any scanner. `reports` is newest first.
 */
export function reportForDay(reports: readonly VulnReportRow[], dayEnd: number): VulnReportRow | undefined {
  return reports.find((r) => r.createTime < dayEnd) ?? reports[reports.length - 1];
}

/**
 * Per UTC day from `fromDay` to `toDay` (inclusive; any time inside a day names it), the digest tag
 * `tagName` of `repoUid` pointed to at the end of the day (from the tag history) and the
 * vulnerabilities of that image (see {@link reportForDay}). Days before the tag first existed, or
 * after it was deleted, have an empty digest and no vulnerabilities. Reads each digest's reports
 * and matches once. With `vex`, matches VEX suppresses now are left out (ADR 0059: VEX is applied
 * as it stands, to every day).
 */
export async function tagDays(
  store: Pick<Store, "tags" | "vulnReports">,
  args: { repoUid: string; tagName: string; fromDay: number; toDay: number; vex?: Pick<Store, "vex"> },
): Promise<TagDay[]> {
  const first = startOfDay(args.fromDay);
  const last = startOfDay(args.toDay);
  const history = await store.tags.history({
    repoUid: args.repoUid,
    tagName: args.tagName,
    end: last + DAY_MS,
    limit: HISTORY_LIMIT,
  });
  const reportsOf = new Map<string, VulnReportRow[]>();
  const matchesOf = new Map<string, Map<string, DayVulnerability>>();
  const days: TagDay[] = [];
  let h = 0;
  let digest = "";
  for (let day = first; day <= last; day += DAY_MS) {
    const dayEnd = day + DAY_MS;
    while (h < history.length && (history[h]?.updateTime ?? Number.POSITIVE_INFINITY) < dayEnd) {
      digest = history[h]?.digest ?? "";
      h++;
    }
    const entry: TagDay = { day, digest, vulnerabilities: new Map() };
    if (digest !== "") {
      let reports = reportsOf.get(digest);
      if (!reports) {
        reports = await store.vulnReports.list({ repoUid: args.repoUid, digests: [digest] }, 1000);
        reportsOf.set(digest, reports);
      }
      const report = reportForDay(reports, dayEnd);
      if (report) {
        let vulns = matchesOf.get(report.uid);
        if (!vulns) {
          const matches = await store.vulnReports.matches([report.uid]);
          const verdicts = args.vex
            ? (await reportVerdicts(args.vex, [report], matches)).get(report.uid)
            : undefined;
          vulns = vulnerabilitiesOf(unsuppressed(matches.get(report.uid) ?? [], verdicts));
          matchesOf.set(report.uid, vulns);
        }
        entry.report = report;
        entry.vulnerabilities = vulns;
      }
    }
    days.push(entry);
  }
  return days;
}

/** Vulnerabilities resolved on one day for one tag: present the day before, absent that day. */
export interface ResolvedDay {
  tag: string;
  /** 00:00 UTC of the day (ms). */
  day: number;
  resolved: DayVulnerability[];
}

/**
 * For the advisory feed's resolvedVulns: per tag of `tagNames` and per UTC day from `fromDay` to
 * `toDay`, the vulnerabilities the tag's image had at the end of the day before and no longer has
 * at the end of that day (derived from tag history and reports as {@link tagDays}). A day whose
 * tag resolves to nothing, or whose image has no report, resolves nothing (missing data is not a
 * fix). Days with nothing resolved are left out.
 */
export async function resolvedVulnerabilities(
  store: Pick<Store, "tags" | "vulnReports">,
  args: { repoUid: string; tagNames: readonly string[]; fromDay: number; toDay: number },
): Promise<ResolvedDay[]> {
  const out: ResolvedDay[] = [];
  for (const tag of args.tagNames) {
    const days = await tagDays(store, {
      repoUid: args.repoUid,
      tagName: tag,
      fromDay: startOfDay(args.fromDay) - DAY_MS,
      toDay: args.toDay,
    });
    for (let i = 1; i < days.length; i++) {
      const before = days[i - 1];
      const today = days[i];
      if (!before?.report || !today?.report) continue;
      const resolved = [...before.vulnerabilities.values()].filter((v) => !today.vulnerabilities.has(v.id));
      if (resolved.length > 0) out.push({ tag, day: today.day, resolved });
    }
  }
  return out;
}
