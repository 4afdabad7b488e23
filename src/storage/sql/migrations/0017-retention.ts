import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * Retention (ADR 0046). `retention_policies`: a policy's rules (JSON text), its schedule (the text
 * given, and `schedule_ms`, 0 for manual), when the schedule runs it next (`next_run_time`), the
 * run lease (`run_until`: a process runs the policy only after moving it from the past to the
 * future in one conditional UPDATE, so one run at a time across processes) and the last run's
 * summary (JSON text). `tag_pull_times`: the last pull of each tag by repo and tag name, written in
 * batches off the pull path; it goes with the repo.
 */
export function retentionMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("retention_policies")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("rules", "text", (c) => c.notNull())
        .addColumn("schedule", "text", (c) => c.notNull())
        .addColumn("schedule_ms", "bigint", (c) => c.notNull())
        .addColumn("next_run_time", "bigint")
        .addColumn("run_until", "bigint", (c) => c.notNull())
        .addColumn("last_run", "text")
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .execute();
      for (const column of ["create_time", "update_time"]) {
        await db.schema
          .createIndex(`retention_policies_${column}_idx`)
          .on("retention_policies")
          .columns([column, "uid"])
          .execute();
      }
      await db.schema
        .createIndex("retention_policies_parent_idx")
        .on("retention_policies")
        .columns(["parent_uid", "uid"])
        .execute();
      // The scheduler's scan: due policies.
      await db.schema
        .createIndex("retention_policies_next_run_idx")
        .on("retention_policies")
        .columns(["next_run_time"])
        .execute();

      await db.schema
        .createTable("tag_pull_times")
        .addColumn("repo_uid", key, (c) => c.notNull().references("repos.uid").onDelete("cascade"))
        .addColumn("tag_name", key, (c) => c.notNull())
        .addColumn("pull_time", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("tag_pull_times_pkey", ["repo_uid", "tag_name"])
        .execute();
    },
  };
}
