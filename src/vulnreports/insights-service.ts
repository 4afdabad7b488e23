import type { RequestContext } from "../core/context.js";
import { notFound } from "../core/errors.js";
import type { ServiceHandlers } from "../core/service.js";
import { requireUidp } from "../core/uidp.js";
import { DAY_MS, utcDayName } from "../core/utc-day.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { InsightsService, VulnerableTag } from "../gen/platform/registry/v2/insights_pb.js";
import { repoPathsOf } from "../registry/repo-path.js";
import type { TagSeverityCounts } from "../storage/insights-store.js";
import type { Store } from "../storage/store.js";
import { reportVerdicts, unsuppressed } from "./vex/report-verdicts.js";

/** Days of pushes answered, today (UTC) included. */
export const INSIGHT_DAYS = 30;
/** Tags answered as the most vulnerable. */
export const TOP_TAGS = 10;
/**
 * Tags ranked by their raw match counts (one SQL query) before VEX is applied to them: the top
 * tags are taken from these. A tag outside them whose matches VEX leaves would rank among the top
 * is not seen; the bound keeps the read small however many tags the group has.
 */
export const CANDIDATE_TAGS = 50;

/** What InsightsService is built from. */
export interface InsightsServiceDeps {
  store: Pick<Store, "groups" | "repos" | "insights" | "vulnReports" | "vex">;
}

type Counts = Pick<TagSeverityCounts, "critical" | "high" | "medium" | "low">;

/** Worst first: more critical, then high, medium, low matches. */
function worstFirst(a: Counts, b: Counts): number {
  return b.critical - a.critical || b.high - a.high || b.medium - a.medium || b.low - a.low;
}

/**
 * InsightsService (ADR 0064): GetInsights answers a group's pushes per UTC day over the last
 * {@link INSIGHT_DAYS} days (from its repos' tag history) and, when the caller holds
 * vuln_report.list there, its {@link TOP_TAGS} tags whose current images carry the most matches
 * that no VEX statement suppresses (the newest current report of each image).
 */
export function createInsightsService(deps: InsightsServiceDeps): ServiceHandlers<typeof InsightsService> {
  const { store } = deps;

  const mostVulnerable = async (groupUid: string): Promise<Omit<VulnerableTag, "$typeName">[]> => {
    const candidates = await store.insights.tagSeverityCounts(groupUid, CANDIDATE_TAGS);
    if (candidates.length === 0) return [];
    const reports = [...new Map(candidates.map((c) => [c.reportUid, c])).values()].map((c) => ({
      uid: c.reportUid,
      repoUid: c.repoUid,
      digest: c.digest,
    }));
    const matches = await store.vulnReports.matches(reports.map((r) => r.uid));
    const verdicts = await reportVerdicts(store, reports, matches);
    const counted = candidates.map((c) => {
      const left = unsuppressed(matches.get(c.reportUid) ?? [], verdicts.get(c.reportUid));
      const count = (severity: string) => left.filter((m) => m.severity === severity).length;
      return {
        ...c,
        critical: count("CRITICAL"),
        high: count("HIGH"),
        medium: count("MEDIUM"),
        low: count("LOW"),
      };
    });
    const top = counted
      .filter((c) => c.critical + c.high + c.medium + c.low > 0)
      .sort(
        (a, b) =>
          worstFirst(a, b) || a.repoUid.localeCompare(b.repoUid) || a.tagName.localeCompare(b.tagName),
      )
      .slice(0, TOP_TAGS);
    const repos = await Promise.all(
      [...new Set(top.map((t) => t.repoUid))].map((uid) => store.repos.get(uid)),
    );
    const paths = await repoPathsOf(
      store,
      repos.filter((r) => r !== undefined),
    );
    return top.map((t) => ({
      repoUid: t.repoUid,
      repo: paths.get(t.repoUid) ?? t.repoUid,
      tag: t.tagName,
      digest: t.digest,
      critical: BigInt(t.critical),
      high: BigInt(t.high),
      medium: BigInt(t.medium),
      low: BigInt(t.low),
    }));
  };

  return {
    async getInsights(req, ctx: RequestContext) {
      requireUidp("group_uid", req.groupUid);
      if (!(await store.groups.get(req.groupUid))) throw notFound("group", req.groupUid);
      const today = Math.floor(ctx.clock.now() / DAY_MS);
      const first = today - INSIGHT_DAYS + 1;
      const counts = new Map(
        (await store.insights.pushesPerDay(req.groupUid, first * DAY_MS, (today + 1) * DAY_MS)).map((d) => [
          d.epochDay,
          d.count,
        ]),
      );
      const pushesPerDay = Array.from({ length: INSIGHT_DAYS }, (_, i) => ({
        day: utcDayName((first + i) * DAY_MS),
        count: BigInt(counts.get(first + i) ?? 0),
      }));
      const canReadReports = await ctx.access.has(req.groupUid, [Capability.CAP_VULN_REPORT_LIST]);
      return {
        pushesPerDay,
        mostVulnerableTags: canReadReports ? await mostVulnerable(req.groupUid) : [],
        vulnerabilitiesOmitted: !canReadReports,
      };
    },
  };
}
