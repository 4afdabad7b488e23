import { sql } from "kysely";
import { DAY_MS } from "../../core/utc-day.js";
import type { InsightsStore } from "../insights-store.js";
import { descendantBounds } from "./predicates.js";
import type { SqlContext } from "./sql-context.js";

type Count = number | bigint | string;

/** InsightsStore over `tag_history`, `tags`, `vuln_reports` and `vuln_matches`; see insights-store.ts. */
export function createInsightsStore(ctx: SqlContext): InsightsStore {
  const { db } = ctx;
  return {
    async pushesPerDay(groupUid, since, until) {
      const [from, to] = descendantBounds(groupUid);
      // The (repo_uid, tag_name, update_time, id) index bounds the scan to the group's repos.
      const { rows } = await sql<{ day: Count; n: Count }>`
        select h.update_time / ${sql.lit(DAY_MS)} as day, count(*) as n from tag_history h
          where h.repo_uid > ${from} and h.repo_uid < ${to}
            and h.update_time >= ${since} and h.update_time < ${until}
            and h.digest <> ''
          group by h.update_time / ${sql.lit(DAY_MS)}
          order by day`.execute(db);
      return rows.map((r) => ({ epochDay: Math.floor(Number(r.day)), count: Number(r.n) }));
    },

    async tagSeverityCounts(groupUid, limit) {
      const [from, to] = descendantBounds(groupUid);
      const { rows } = await sql<{
        repo_uid: string;
        tag_name: string;
        digest: string;
        report_uid: string;
        critical: Count;
        high: Count;
        medium: Count;
        low: Count;
      }>`
        select t.parent_uid as repo_uid, t.name as tag_name, t.digest as digest, r.uid as report_uid,
            sum(case when m.severity = 'CRITICAL' then 1 else 0 end) as critical,
            sum(case when m.severity = 'HIGH' then 1 else 0 end) as high,
            sum(case when m.severity = 'MEDIUM' then 1 else 0 end) as medium,
            sum(case when m.severity = 'LOW' then 1 else 0 end) as low
          from tags t
          join vuln_reports r on r.repo_uid = t.parent_uid and r.digest = t.digest
            and r.superseded_time is null
            and r.uid = (
              select r2.uid from vuln_reports r2
                where r2.repo_uid = t.parent_uid and r2.digest = t.digest and r2.superseded_time is null
                order by r2.create_time desc, r2.uid desc limit 1)
          join vuln_matches m on m.report_uid = r.uid
          where t.uid > ${from} and t.uid < ${to}
          group by t.parent_uid, t.name, t.digest, r.uid
          order by critical desc, high desc, medium desc, low desc, repo_uid, tag_name
          limit ${limit}`.execute(db);
      return rows.map((r) => ({
        repoUid: r.repo_uid,
        tagName: r.tag_name,
        digest: r.digest,
        reportUid: r.report_uid,
        critical: Number(r.critical),
        high: Number(r.high),
        medium: Number(r.medium),
        low: Number(r.low),
      }));
    },
  };
}
