import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * `audit_records` (ADR 0048): the append-only audit log. `seq` orders records of the same
 * millisecond; lists run newest first on (time, seq). Indexes serve an organization's records
 * (`group_uid` range, then time), the platform-wide list and retention (time), and the filters by
 * actor, action and resource. Text keys are `COLLATE "C"` on PostgreSQL, so that the uidp range
 * of a group's descendants holds as on SQLite.
 */
export function auditLogMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("audit_records")
        .addColumn("seq", dialect === "postgres" ? "bigserial" : "integer", (c) =>
          dialect === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn("uid", key, (c) => c.notNull())
        .addColumn("time", "bigint", (c) => c.notNull())
        .addColumn("group_uid", key, (c) => c.notNull())
        .addColumn("actor", key, (c) => c.notNull())
        .addColumn("act", "text")
        .addColumn("action", key, (c) => c.notNull())
        .addColumn("resource", key, (c) => c.notNull())
        .addColumn("result_code", key, (c) => c.notNull())
        .addColumn("result_reason", "text", (c) => c.notNull())
        .addColumn("request_id", "text", (c) => c.notNull())
        .addColumn("source_address", "text", (c) => c.notNull())
        .addColumn("user_agent", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("audit_records_group_time_idx")
        .on("audit_records")
        .columns(["group_uid", "time", "seq"])
        .execute();
      await db.schema
        .createIndex("audit_records_time_idx")
        .on("audit_records")
        .columns(["time", "seq"])
        .execute();
      for (const column of ["actor", "action", "resource"]) {
        await db.schema
          .createIndex(`audit_records_${column}_idx`)
          .on("audit_records")
          .columns([column, "time"])
          .execute();
      }
    },
  };
}
