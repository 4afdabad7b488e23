import { type Selectable, type SqlBool, sql } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import type {
  ReplicationDirection,
  ReplicationRuleRow,
  ReplicationRunError,
  ReplicationRunProgress,
  ReplicationRunRow,
  ReplicationRunState,
  ReplicationStore,
  ReplicationTrigger,
} from "../replication-store.js";
import { REPLICATION_TRIGGER_EVENT_TYPE } from "../replication-store.js";
import { readBool, readInt, readOptionalInt } from "./dialect.js";
import { listWindow, STANDARD_SORT } from "./list-window.js";
import { allOf, commonPredicates, selfOrDescendant, withinScopes } from "./predicates.js";
import type { ReplicationRulesTable, ReplicationRunsTable } from "./schema.js";
import { guardWrite, parentColumn, type SqlContext } from "./sql-context.js";

function toRuleRow(r: Selectable<ReplicationRulesTable>): ReplicationRuleRow {
  const row: ReplicationRuleRow = {
    uid: r.uid,
    parentUid: r.parent_uid,
    name: r.name,
    direction: r.direction as ReplicationDirection,
    remoteUrl: r.remote_url,
    remoteUsername: r.remote_username,
    remotePassword: r.remote_password,
    repoPattern: r.repo_pattern,
    tagPattern: r.tag_pattern,
    destination: r.destination,
    trigger: r.trigger as ReplicationTrigger,
    interval: r.interval,
    intervalMs: readInt(r.interval_ms),
    enabled: readBool(r.enabled),
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
  const next = readOptionalInt(r.next_run_time);
  if (next !== undefined) row.nextRunTime = next;
  return row;
}

function toRunRow(r: Selectable<ReplicationRunsTable>): ReplicationRunRow {
  const row: ReplicationRunRow = {
    uid: r.uid,
    ruleUid: r.rule_uid,
    trigger: r.trigger as ReplicationTrigger,
    state: r.state as ReplicationRunState,
    createTime: readInt(r.create_time),
    copiedManifests: readInt(r.copied_manifests),
    copiedBlobs: readInt(r.copied_blobs),
    copiedBytes: readInt(r.copied_bytes),
    skippedBlobs: readInt(r.skipped_blobs),
    errors: JSON.parse(r.errors) as ReplicationRunError[],
    errorsOmitted: readInt(r.errors_omitted),
    leaseOwner: r.lease_owner,
    leaseUntil: readInt(r.lease_until),
  };
  const start = readOptionalInt(r.start_time);
  if (start !== undefined) row.startTime = start;
  const end = readOptionalInt(r.end_time);
  if (end !== undefined) row.endTime = end;
  return row;
}

function progressColumns(p: ReplicationRunProgress) {
  return {
    copied_manifests: p.copiedManifests,
    copied_blobs: p.copiedBlobs,
    copied_bytes: p.copiedBytes,
    skipped_blobs: p.skippedBlobs,
    errors: JSON.stringify(p.errors),
    errors_omitted: p.errorsOmitted,
  };
}

const ZERO_PROGRESS: ReplicationRunProgress = {
  copiedManifests: 0,
  copiedBlobs: 0,
  copiedBytes: 0,
  skippedBlobs: 0,
  errors: [],
  errorsOmitted: 0,
};

/**
 * ReplicationStore over `replication_rules`, `replication_runs` and `replication_push_cursors`
 * (migration 0022). Claims (a due rule, a run, a cursor move) are single conditional UPDATEs: of
 * processes racing on one row exactly one sees it updated, on both engines (PostgreSQL re-checks
 * the WHERE on the row after a concurrent update; SQLite serializes writers). The partial unique
 * indexes keep one QUEUED and one RUNNING run per rule even under races.
 */
export function createReplicationStore(ctx: SqlContext): ReplicationStore {
  const { db } = ctx;
  const nameTaken = (row: ReplicationRuleRow) => () =>
    alreadyExists(
      "replicationRule",
      row.name,
      `organization ${row.parentUid} already has a replication rule named "${row.name}"`,
    );
  const ruleColumns = (row: ReplicationRuleRow) => ({
    name: row.name,
    direction: row.direction,
    remote_url: row.remoteUrl,
    remote_username: row.remoteUsername,
    remote_password: row.remotePassword,
    repo_pattern: row.repoPattern,
    tag_pattern: row.tagPattern,
    destination: row.destination,
    trigger: row.trigger,
    interval: row.interval,
    interval_ms: row.intervalMs,
    enabled: ctx.dialect.name === "postgres" ? row.enabled : row.enabled ? 1 : 0,
    next_run_time: row.nextRunTime ?? null,
    update_time: row.updateTime,
  });
  const held = (runUid: string, owner: string) =>
    db
      .updateTable("replication_runs")
      .where("uid", "=", runUid)
      .where("lease_owner", "=", owner)
      .where("state", "=", "RUNNING");

  const store: ReplicationStore = {
    async getRule(uid) {
      const r = await db
        .selectFrom("replication_rules")
        .selectAll()
        .where("uid", "=", uid)
        .executeTakeFirst();
      return r && toRuleRow(r);
    },

    listRules(filter, window) {
      return listWindow(
        ctx,
        {
          table: "replication_rules",
          from: db.selectFrom("replication_rules"),
          where: (uid) => commonPredicates(filter, uid),
          sort: STANDARD_SORT,
          toRow: toRuleRow,
        },
        window,
      );
    },

    async pushRules(orgUid) {
      const rows = await db
        .selectFrom("replication_rules")
        .selectAll()
        .where("parent_uid", "=", orgUid)
        .where("trigger", "=", "ON_PUSH")
        .where("direction", "=", "PUSH")
        .where(sql<SqlBool>`enabled = ${ctx.dialect.name === "postgres" ? true : 1}`)
        .orderBy("uid")
        .execute();
      return rows.map(toRuleRow);
    },

    async insertRule(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("replication_rules")
            .values({
              uid: row.uid,
              parent_uid: parentColumn(row.uid, row.parentUid),
              create_time: row.createTime,
              ...ruleColumns(row),
            })
            .execute(),
        { unique: nameTaken(row) },
      );
      ctx.changed("replication_rules");
    },

    async updateRule(row) {
      const result = await guardWrite(
        ctx,
        () =>
          db
            .updateTable("replication_rules")
            .set(ruleColumns(row))
            .where("uid", "=", row.uid)
            .executeTakeFirst(),
        { unique: nameTaken(row) },
      );
      ctx.changed("replication_rules");
      return result.numUpdatedRows > 0n;
    },

    async deleteRule(uid) {
      // The runs go by the foreign key's cascade; said explicitly for engines where it is off.
      await db.deleteFrom("replication_runs").where("rule_uid", "=", uid).execute();
      const result = await db.deleteFrom("replication_rules").where("uid", "=", uid).executeTakeFirst();
      ctx.changed("replication_rules", "replication_runs");
      return result.numDeletedRows > 0n;
    },

    async enqueueRun(run) {
      await db
        .insertInto("replication_runs")
        .values({
          uid: run.uid,
          rule_uid: run.ruleUid,
          trigger: run.trigger,
          state: "QUEUED",
          create_time: run.createTime,
          ...progressColumns(ZERO_PROGRESS),
          lease_owner: "",
          lease_until: 0,
        })
        .onConflict((c) => c.doNothing())
        .execute();
      ctx.changed("replication_runs");
      const queued = await db
        .selectFrom("replication_runs")
        .selectAll()
        .where("rule_uid", "=", run.ruleUid)
        .where("state", "=", "QUEUED")
        .executeTakeFirst();
      if (!queued) throw new Error(`replication: run of rule ${run.ruleUid} neither queued nor found`);
      return toRunRow(queued);
    },

    async dueRules(now, limit) {
      const rows = await db
        .selectFrom("replication_rules")
        .select("uid")
        .where(sql<SqlBool>`next_run_time <= ${now} and interval_ms > 0`)
        .orderBy("next_run_time")
        .limit(limit)
        .execute();
      return rows.map((r) => r.uid);
    },

    async claimDue(ruleUid, now) {
      const result = await db
        .updateTable("replication_rules")
        .set({ next_run_time: sql`${now} + interval_ms` })
        .where("uid", "=", ruleUid)
        .where(sql<SqlBool>`interval_ms > 0 and next_run_time <= ${now}`)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async claimRun({ owner, now, leaseUntil }) {
      // A run whose process died: taken over and started again (the copier skips what was sent).
      const orphans = await db
        .selectFrom("replication_runs")
        .select("uid")
        .where("state", "=", "RUNNING")
        .where("lease_until", "<", BigInt(now))
        .orderBy("create_time")
        .limit(5)
        .execute();
      for (const { uid } of orphans) {
        const taken = await db
          .updateTable("replication_runs")
          .set({
            lease_owner: owner,
            lease_until: leaseUntil,
            start_time: now,
            ...progressColumns(ZERO_PROGRESS),
          })
          .where("uid", "=", uid)
          .where("state", "=", "RUNNING")
          .where("lease_until", "<", BigInt(now))
          .executeTakeFirst();
        if (taken.numUpdatedRows > 0n) return store.getRun(uid);
      }
      const idle = sql<SqlBool>`not exists (select 1 from replication_runs r2
        where r2.rule_uid = replication_runs.rule_uid and r2.state = 'RUNNING')`;
      const queued = await db
        .selectFrom("replication_runs")
        .select("uid")
        .where("state", "=", "QUEUED")
        .where(idle)
        .orderBy("create_time")
        .limit(5)
        .execute();
      for (const { uid } of queued) {
        try {
          const taken = await db
            .updateTable("replication_runs")
            .set({ state: "RUNNING", lease_owner: owner, lease_until: leaseUntil, start_time: now })
            .where("uid", "=", uid)
            .where("state", "=", "QUEUED")
            .where(idle)
            .executeTakeFirst();
          if (taken.numUpdatedRows > 0n) {
            ctx.changed("replication_runs");
            return store.getRun(uid);
          }
        } catch (err) {
          // Another process started this rule's other run meanwhile (one RUNNING per rule).
          if (!ctx.dialect.isUniqueViolation(err)) throw err;
        }
      }
      return undefined;
    },

    async renewLease(runUid, owner, leaseUntil) {
      const result = await held(runUid, owner).set({ lease_until: leaseUntil }).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async saveProgress(runUid, owner, progress) {
      const result = await held(runUid, owner).set(progressColumns(progress)).executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async finishRun(runUid, owner, outcome) {
      const result = await held(runUid, owner)
        .set({
          ...progressColumns(outcome),
          state: outcome.state,
          end_time: outcome.endTime,
          lease_owner: "",
          lease_until: 0,
        })
        .executeTakeFirst();
      ctx.changed("replication_runs");
      return result.numUpdatedRows > 0n;
    },

    async releaseRun(runUid, owner) {
      await held(runUid, owner).set({ lease_until: 0 }).execute();
    },

    async getRun(uid) {
      const r = await db.selectFrom("replication_runs").selectAll().where("uid", "=", uid).executeTakeFirst();
      return r && toRunRow(r);
    },

    async listRuns({ ruleUid, within, after, limit }) {
      const filter = allOf([
        ...(ruleUid !== undefined ? [sql<SqlBool>`rule_uid = ${ruleUid}`] : []),
        ...withinScopes(within, sql<string>`uid`),
      ]);
      let page = db.selectFrom("replication_runs").selectAll();
      let count = db.selectFrom("replication_runs").select((eb) => eb.fn.countAll<number | bigint>().as("n"));
      if (filter) {
        page = page.where(filter);
        count = count.where(filter);
      }
      if (after) {
        page = page.where(
          sql<SqlBool>`(create_time < ${after.createTime} or (create_time = ${after.createTime} and uid < ${after.uid}))`,
        );
      }
      const rows = await page
        .orderBy("create_time", "desc")
        .orderBy("uid", "desc")
        .limit(limit + 1)
        .execute();
      const total = await count.executeTakeFirstOrThrow();
      return { rows: rows.map(toRunRow), total: readInt(total.n) };
    },

    async syncPushCursor(orgUid) {
      const wanted = (await store.pushRules(orgUid)).length > 0;
      if (!wanted) {
        await db.deleteFrom("replication_push_cursors").where("org_uid", "=", orgUid).execute();
        return;
      }
      const newest = await db
        .selectFrom("events")
        .select((eb) => eb.fn.max("seq").as("seq"))
        .executeTakeFirst();
      await db
        .insertInto("replication_push_cursors")
        .values({ org_uid: orgUid, cursor_seq: readOptionalInt(newest?.seq ?? null) ?? 0 })
        .onConflict((c) => c.column("org_uid").doNothing())
        .execute();
    },

    async pushCursorOrgs() {
      const rows = await db
        .selectFrom("replication_push_cursors")
        .select("org_uid")
        .orderBy("org_uid")
        .execute();
      return rows.map((r) => r.org_uid);
    },

    async pushEvents(orgUid, limit) {
      const cursor = await db
        .selectFrom("replication_push_cursors")
        .select("cursor_seq")
        .where("org_uid", "=", orgUid)
        .executeTakeFirst();
      if (!cursor) return undefined;
      const rows = await db
        .selectFrom("events")
        .select(["seq", "data"])
        .where("seq", ">", cursor.cursor_seq)
        .where(selfOrDescendant(orgUid, sql<string>`group_uid`))
        .where("type", "=", REPLICATION_TRIGGER_EVENT_TYPE)
        .orderBy("seq")
        .limit(limit)
        .execute();
      return {
        cursor: readInt(cursor.cursor_seq),
        events: rows.map((r) => ({ seq: readInt(r.seq), data: r.data })),
      };
    },

    async advancePushCursor(orgUid, from, to) {
      const result = await db
        .updateTable("replication_push_cursors")
        .set({ cursor_seq: to })
        .where("org_uid", "=", orgUid)
        .where("cursor_seq", "=", BigInt(from))
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },
  };
  return store;
}
