import { type SqlBool, sql } from "kysely";
import type { AuditFilter, AuditRow, AuditStore } from "../audit-store.js";
import { readInt } from "./dialect.js";
import { NO_ROWS, type Predicate, selfOrDescendant } from "./predicates.js";
import { precompiledBySize, type SqlContext } from "./sql-context.js";

const COLUMNS = [
  "uid",
  "time",
  "group_uid",
  "actor",
  "act",
  "action",
  "resource",
  "result_code",
  "result_reason",
  "request_id",
  "source_address",
  "user_agent",
] as const;

/** The multi-row INSERT of `size` records, compiled once per engine and size (the API write path). */
const insertRows = precompiledBySize((db, size) =>
  db.insertInto("audit_records").values(
    Array.from({ length: size }, () => ({
      uid: "",
      time: 0,
      group_uid: "",
      actor: "",
      act: null,
      action: "",
      resource: "",
      result_code: "",
      result_reason: "",
      request_id: "",
      source_address: "",
      user_agent: "",
    })),
  ),
);

function parametersOf(row: AuditRow): unknown[] {
  return [
    row.uid,
    row.time,
    row.groupUid,
    row.actor,
    row.act === undefined ? null : JSON.stringify(row.act),
    row.action,
    row.resource,
    row.resultCode,
    row.resultReason,
    row.requestId,
    row.sourceAddress,
    row.userAgent,
  ];
}

const GROUP = sql<string>`group_uid`;

function predicatesOf(filter: AuditFilter): Predicate[] {
  const out: Predicate[] = [];
  if (filter.descendantsOf) out.push(selfOrDescendant(filter.descendantsOf, GROUP));
  const within = filter.within;
  if (within !== undefined && !within.all) {
    if (within.uids.length === 0) out.push(NO_ROWS);
    else
      out.push(
        sql<SqlBool>`(${sql.join(
          within.uids.map((uid) => selfOrDescendant(uid, GROUP)),
          sql` or `,
        )})`,
      );
  }
  if (filter.actor) out.push(sql<SqlBool>`actor = ${filter.actor}`);
  if (filter.action) out.push(sql<SqlBool>`action = ${filter.action}`);
  if (filter.resource) out.push(sql<SqlBool>`resource = ${filter.resource}`);
  if (filter.resultCode) out.push(sql<SqlBool>`result_code = ${filter.resultCode}`);
  if (filter.start !== undefined) out.push(sql<SqlBool>`time >= ${filter.start}`);
  if (filter.end !== undefined) out.push(sql<SqlBool>`time < ${filter.end}`);
  return out;
}

/** AuditStore over `audit_records`; see `AuditStore` in audit-store.ts. */
export function createAuditStore(ctx: SqlContext): AuditStore {
  const { db } = ctx;
  return {
    async append(rows) {
      // No change-feed notice: nothing caches the audit log, and the write stays one INSERT.
      for (let i = 0; i < rows.length; i += 100) {
        const chunk = rows.slice(i, i + 100);
        await insertRows(ctx, chunk.length, chunk.flatMap(parametersOf));
      }
    },

    async list(filter, page) {
      let query = db
        .selectFrom("audit_records")
        .select([...COLUMNS, "seq"])
        .orderBy("time", "desc")
        .orderBy("seq", "desc")
        .limit(page.limit);
      for (const p of predicatesOf(filter)) query = query.where(p);
      const after = page.after;
      if (after !== undefined) {
        query = query.where(
          sql<SqlBool>`(time < ${after.time} or (time = ${after.time} and seq < ${after.seq}))`,
        );
      }
      const rows = await query.execute();
      return rows.map((r) => ({
        seq: readInt(r.seq),
        row: {
          uid: r.uid,
          time: readInt(r.time),
          groupUid: r.group_uid,
          actor: r.actor,
          ...(r.act === null ? {} : { act: JSON.parse(r.act) as AuditRow["act"] }),
          action: r.action,
          resource: r.resource,
          resultCode: r.result_code as AuditRow["resultCode"],
          resultReason: r.result_reason,
          requestId: r.request_id,
          sourceAddress: r.source_address,
          userAgent: r.user_agent,
        },
      }));
    },

    async pruneBefore(before, limit) {
      const result = await db
        .deleteFrom("audit_records")
        .where(
          sql<SqlBool>`seq in (select seq from audit_records where time < ${before} order by time limit ${limit})`,
        )
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
