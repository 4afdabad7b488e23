import { type Selectable, type SqlBool, sql } from "kysely";
import type {
  RetentionPolicyRow,
  RetentionRuleData,
  RetentionRunSummary,
  RetentionStore,
} from "../retention-store.js";
import { readInt, readOptionalInt } from "./dialect.js";
import { listWindow, TIME_SORT } from "./list-window.js";
import { commonPredicates, selfOrDescendant } from "./predicates.js";
import type { RetentionPoliciesTable } from "./schema.js";
import { parentColumn, type SqlContext } from "./sql-context.js";

function toPolicyRow(r: Selectable<RetentionPoliciesTable>): RetentionPolicyRow {
  const row: RetentionPolicyRow = {
    uid: r.uid,
    parentUid: r.parent_uid,
    description: r.description,
    rules: JSON.parse(r.rules) as RetentionRuleData[],
    schedule: r.schedule,
    scheduleMs: readInt(r.schedule_ms),
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
  const next = readOptionalInt(r.next_run_time);
  if (next !== undefined) row.nextRunTime = next;
  if (r.last_run !== null) row.lastRun = JSON.parse(r.last_run) as RetentionRunSummary;
  return row;
}

/**
 * RetentionStore over `retention_policies` and `tag_pull_times` (migration 0017); see
 * RetentionStore. A run is claimed by one conditional UPDATE of `run_until` (and, for a scheduled
 * run, of `next_run_time`): of processes racing for the same policy exactly one sees a row
 * updated, on both engines (PostgreSQL re-checks the WHERE after a concurrent update; SQLite
 * serializes writers). Pulls are upserted keeping the newest time.
 */
export function createRetentionStore(ctx: SqlContext): RetentionStore {
  const { db } = ctx;
  const newest = ctx.dialect.name === "postgres" ? sql.raw("greatest") : sql.raw("max");
  return {
    async get(uid) {
      const r = await db
        .selectFrom("retention_policies")
        .selectAll()
        .where("uid", "=", uid)
        .executeTakeFirst();
      return r && toPolicyRow(r);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "retention_policies",
          from: db.selectFrom("retention_policies"),
          where: (uid) => commonPredicates(filter, uid),
          sort: TIME_SORT,
          toRow: toPolicyRow,
        },
        window,
      );
    },

    async insert(row) {
      await db
        .insertInto("retention_policies")
        .values({
          uid: row.uid,
          parent_uid: parentColumn(row.uid, row.parentUid),
          description: row.description,
          rules: JSON.stringify(row.rules),
          schedule: row.schedule,
          schedule_ms: row.scheduleMs,
          next_run_time: row.nextRunTime ?? null,
          run_until: 0,
          last_run: null,
          create_time: row.createTime,
          update_time: row.updateTime,
        })
        .execute();
      ctx.changed("retention_policies");
    },

    async update(row) {
      const result = await db
        .updateTable("retention_policies")
        .set({
          description: row.description,
          rules: JSON.stringify(row.rules),
          schedule: row.schedule,
          schedule_ms: row.scheduleMs,
          next_run_time: row.nextRunTime ?? null,
          update_time: row.updateTime,
        })
        .where("uid", "=", row.uid)
        .executeTakeFirst();
      ctx.changed("retention_policies");
      return result.numUpdatedRows > 0n;
    },

    async delete(uid) {
      const result = await db.deleteFrom("retention_policies").where("uid", "=", uid).executeTakeFirst();
      ctx.changed("retention_policies");
      return result.numDeletedRows > 0n;
    },

    async claimRun(uid, { now, leaseUntil, scheduled }) {
      let update = db
        .updateTable("retention_policies")
        .set({ run_until: leaseUntil })
        .where("uid", "=", uid)
        .where(sql<SqlBool>`run_until < ${now}`);
      if (scheduled) {
        update = update
          .set({ next_run_time: sql`${now} + schedule_ms` })
          .where(sql<SqlBool>`schedule_ms > 0 and next_run_time <= ${now}`);
      }
      const result = await update.executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async due(now, limit) {
      const rows = await db
        .selectFrom("retention_policies")
        .select("uid")
        .where(sql<SqlBool>`next_run_time <= ${now} and schedule_ms > 0 and run_until < ${now}`)
        .orderBy("next_run_time")
        .limit(limit)
        .execute();
      return rows.map((r) => r.uid);
    },

    async finishRun(uid, summary) {
      await db
        .updateTable("retention_policies")
        .set({ run_until: 0, last_run: JSON.stringify(summary) })
        .where("uid", "=", uid)
        .execute();
    },

    async releaseRun(uid) {
      await db.updateTable("retention_policies").set({ run_until: 0 }).where("uid", "=", uid).execute();
    },

    async candidates(parentUid) {
      const rows = await db
        .selectFrom("tags as t")
        .leftJoin("tag_pull_times as p", (join) =>
          join.onRef("p.repo_uid", "=", "t.parent_uid").onRef("p.tag_name", "=", "t.name"),
        )
        .select([
          "t.uid as uid",
          "t.parent_uid as repo_uid",
          "t.name as name",
          "t.digest as digest",
          "t.update_time as update_time",
          "p.pull_time as pull_time",
          sql<bigint | number | null>`(select max(h.update_time) from tag_history h
            where h.repo_uid = t.parent_uid and h.tag_name = t.name)`.as("push_time"),
        ])
        .where(selfOrDescendant(parentUid, sql<string>`t.parent_uid`))
        .orderBy("t.uid")
        .execute();
      return rows.map((r) => {
        const candidate = {
          uid: r.uid,
          repoUid: r.repo_uid,
          name: r.name,
          digest: r.digest,
          pushTime: readOptionalInt(r.push_time) ?? readInt(r.update_time),
        };
        const pulled = readOptionalInt(r.pull_time ?? null);
        return pulled === undefined ? candidate : { ...candidate, pullTime: pulled };
      });
    },

    recordPulls(pulls) {
      if (pulls.length === 0) return Promise.resolve();
      return ctx.transaction(async (tx) => {
        for (const pull of pulls) {
          const which =
            "tag" in pull ? sql<SqlBool>`t.name = ${pull.tag}` : sql<SqlBool>`t.digest = ${pull.digest}`;
          await sql`insert into tag_pull_times (repo_uid, tag_name, pull_time)
            select t.parent_uid, t.name, ${pull.time} from tags t where t.parent_uid = ${pull.repoUid} and ${which}
            on conflict (repo_uid, tag_name) do update
            set pull_time = ${newest}(tag_pull_times.pull_time, excluded.pull_time)`.execute(tx.db);
        }
      });
    },
  };
}
