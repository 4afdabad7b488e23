import { fromTimestamp, toTimestamp } from "../core/api-convert.js";
import type { AccessScopes, RequestContext } from "../core/context.js";
import { invalidArgument } from "../core/errors.js";
import { isUidp } from "../core/uidp.js";
import { DAY_MS, startOfDay } from "../core/utc-day.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type {
  ListVulnCountReportsRequest,
  VulnCountReport,
} from "../gen/platform/registry/v1/vulnerabilities_pb.js";
import { describeImage } from "../registry/image-description.js";
import { validateTagName } from "../registry/names.js";
import { type DayVulnerability, tagDays } from "./daily-vulns.js";
import { imageSeverity } from "./report-mapping.js";
import { SEVERITIES } from "./report-model.js";
import type { VulnReportServiceDeps } from "./service-deps.js";

/** Longest range one request may ask for (days). */
export const MAX_COUNT_DAYS = 366;
/** Most series (references) one request may ask for. */
const MAX_REFERENCES = 50;

/** How vulnerabilities add up over the days of a series. */
export type CountMode = "daily" | "cumulative";

/** The caller's repo named by `repo`: a uid, or a name unique among the repos the caller may see. */
async function resolveRepo(
  deps: VulnReportServiceDeps,
  within: AccessScopes,
  repo: string,
): Promise<{ uid: string; name: string } | undefined> {
  if (repo === "") throw invalidArgument("repo", "repo is required (a repo uid or name)");
  if (isUidp(repo)) {
    const row = await deps.store.repos.get(repo);
    if (!row) return undefined;
    const visible = within.all || within.uids.some((root) => repo === root || repo.startsWith(`${root}/`));
    return visible ? { uid: row.uid, name: row.name } : undefined;
  }
  const slice = await deps.store.repos.list(
    { name: repo, within },
    { order: { field: "uid", desc: false }, limit: 2, skip: 0 },
  );
  if (slice.rows.length > 1) {
    throw invalidArgument("repo", `more than one of your repos is named ${repo}; name it by its uid`);
  }
  const row = slice.rows[0];
  return row && { uid: row.uid, name: row.name };
}

function idsOf(vulns: Iterable<DayVulnerability>, severity?: string): string[] {
  return [...vulns]
    .filter((v) => severity === undefined || v.severity === severity)
    .map((v) => v.id)
    .sort();
}

function countReport(
  repo: string,
  tag: string,
  day: number,
  vulns: Map<string, DayVulnerability>,
  sizeBytes: number,
): VulnCountReport {
  const all = [...vulns.values()];
  return {
    $typeName: "platform.registry.v1.VulnCountReport",
    repo,
    tag,
    date: toTimestamp(day),
    vulnCounts: SEVERITIES.map((severity) => ({
      $typeName: "platform.registry.v1.VulnCount",
      severity: imageSeverity(severity),
      count: BigInt(all.filter((v) => v.severity === severity).length),
    })),
    sizeBytes: BigInt(sizeBytes),
    cveIds: idsOf(all),
    lowCveIds: idsOf(all, "LOW"),
    medCveIds: idsOf(all, "MEDIUM"),
    highCveIds: idsOf(all, "HIGH"),
    critCveIds: idsOf(all, "CRITICAL"),
    negligibleCveIds: idsOf(all, "NEGLIGIBLE"),
    unknownCveIds: idsOf(all, "UNKNOWN"),
  };
}

/** Days in the range asked for when `from` is left out. */
export const DEFAULT_COUNT_DAYS = 30;

/**
 * The range of a count request: as given, or by default the last {@link DEFAULT_COUNT_DAYS} days.
 * No `to`: today (`now`). No `from`: the 30 days ending at `to` (today and the 29 days before it).
 */
export function countRange(
  from: number | undefined,
  to: number | undefined,
  now: number,
): { from: number; to: number } {
  const end = to ?? now;
  return { from: from ?? startOfDay(end) - (DEFAULT_COUNT_DAYS - 1) * DAY_MS, to: end };
}

/**
 * ListVulnCountReports and its cumulative form: per reference (repo, tag) and per UTC day from
 * `from` to `to` inclusive (default: the last 30 days, see {@link countRange}), one row, counting only the vulnerabilities VEX does not suppress. `daily`: the vulnerabilities of the image the tag pointed to
 * at the end of that day. `cumulative`: every distinct vulnerability id seen on that day or an
 * earlier day of the range (its severity the latest seen). Days the tag resolved to nothing are
 * left out. A repo the caller cannot see (or that does not exist) yields no rows.
 */
export async function countSeries(
  deps: VulnReportServiceDeps,
  ctx: RequestContext,
  req: ListVulnCountReportsRequest,
  mode: CountMode,
): Promise<VulnCountReport[]> {
  const within = await ctx.access.scopesWith([Capability.CAP_VULN_REPORT_LIST]);
  const { from, to } = countRange(fromTimestamp(req.from), fromTimestamp(req.to), ctx.clock.now());
  if (startOfDay(to) < startOfDay(from)) throw invalidArgument("to", "to must not be before from");
  if ((startOfDay(to) - startOfDay(from)) / DAY_MS + 1 > MAX_COUNT_DAYS) {
    throw invalidArgument("to", `the range may span at most ${MAX_COUNT_DAYS} days`);
  }
  const references = req.references.length > 0 ? req.references : [{ repo: req.repo, tag: req.tag }];
  if (references.length > MAX_REFERENCES) {
    throw invalidArgument("references", `at most ${MAX_REFERENCES} references per request`);
  }
  const items: VulnCountReport[] = [];
  for (const [i, ref] of references.entries()) {
    const field = req.references.length > 0 ? `references[${i}]` : "";
    try {
      validateTagName(ref.tag);
    } catch {
      throw invalidArgument(field ? `${field}.tag` : "tag", "tag must be a valid tag name");
    }
    const repo = await resolveRepo(deps, within, ref.repo);
    if (!repo) continue;
    const days = await tagDays(deps.store, {
      repoUid: repo.uid,
      tagName: ref.tag,
      fromDay: from,
      toDay: to,
      vex: deps.store,
    });
    const sizes = new Map<string, number>();
    const seen = new Map<string, DayVulnerability>();
    for (const day of days) {
      if (day.digest === "") continue;
      let size = sizes.get(day.digest);
      if (size === undefined) {
        size = await imageSize(deps, ctx, repo.uid, day.digest);
        sizes.set(day.digest, size);
      }
      let vulns = day.vulnerabilities;
      if (mode === "cumulative") {
        for (const [id, v] of vulns) seen.set(id, v);
        vulns = new Map(seen);
      }
      items.push(countReport(repo.name, ref.tag, day.day, vulns, size));
    }
  }
  return items;
}

/** Bytes of the image (its amd64 platform, else its first); 0 when the manifest is gone. */
async function imageSize(
  deps: VulnReportServiceDeps,
  ctx: RequestContext,
  repoUid: string,
  digest: string,
): Promise<number> {
  try {
    const platforms = await describeImage(deps, repoUid, digest, ctx.signal);
    return (platforms.find((p) => p.architecture === "amd64") ?? platforms[0])?.size ?? 0;
  } catch (err) {
    ctx.signal.throwIfAborted();
    if (err instanceof Error && err.name === "DomainError") return 0;
    throw err;
  }
}
