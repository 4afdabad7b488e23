import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * Replication (ADR 0054):
 * - `replication_rules`: an organization's rules; the remote's password sealed (ADR 0051), the
 *   interval (text given and ms, 0 when none) and when it fires next (`next_run_time`, claimed by
 *   one conditional UPDATE so several servers start a due rule once). Names are unique per
 *   organization.
 * - `replication_runs`: one row per run: state (QUEUED, RUNNING, SUCCEEDED, FAILED), counters,
 *   errors (JSON text) and the lease (`lease_owner`, `lease_until`) of the process running it. Two
 *   partial unique indexes keep at most one QUEUED and one RUNNING run per rule.
 * - `replication_push_cursors`: per organization with an ON_PUSH rule, the outbox seq up to which
 *   its push events have queued runs (advanced in the transaction that queues them).
 */
export function replicationMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  const bool = dialect === "postgres" ? sql`boolean` : sql`integer`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("replication_rules")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("name", key, (c) => c.notNull())
        .addColumn("direction", "text", (c) => c.notNull())
        .addColumn("remote_url", "text", (c) => c.notNull())
        .addColumn("remote_username", "text", (c) => c.notNull())
        .addColumn("remote_password", "text", (c) => c.notNull())
        .addColumn("repo_pattern", "text", (c) => c.notNull())
        .addColumn("tag_pattern", "text", (c) => c.notNull())
        .addColumn("destination", "text", (c) => c.notNull())
        .addColumn("trigger", "text", (c) => c.notNull())
        .addColumn("interval", "text", (c) => c.notNull())
        .addColumn("interval_ms", "bigint", (c) => c.notNull())
        .addColumn("enabled", bool, (c) => c.notNull())
        .addColumn("next_run_time", "bigint")
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .addUniqueConstraint("replication_rules_parent_name_key", ["parent_uid", "name"])
        .execute();
      for (const column of ["create_time", "update_time"]) {
        await db.schema
          .createIndex(`replication_rules_${column}_idx`)
          .on("replication_rules")
          .columns([column, "uid"])
          .execute();
      }
      await db.schema
        .createIndex("replication_rules_next_run_idx")
        .on("replication_rules")
        .column("next_run_time")
        .execute();

      await db.schema
        .createTable("replication_runs")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("rule_uid", key, (c) =>
          c.notNull().references("replication_rules.uid").onDelete("cascade"),
        )
        .addColumn("trigger", "text", (c) => c.notNull())
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("start_time", "bigint")
        .addColumn("end_time", "bigint")
        .addColumn("copied_manifests", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("copied_blobs", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("copied_bytes", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("skipped_blobs", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("errors", "text", (c) => c.notNull().defaultTo("[]"))
        .addColumn("errors_omitted", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("lease_owner", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("lease_until", "bigint", (c) => c.notNull().defaultTo(0))
        .execute();
      // Lists: a rule's runs newest first.
      await db.schema
        .createIndex("replication_runs_rule_idx")
        .on("replication_runs")
        .columns(["rule_uid", "create_time", "uid"])
        .execute();
      await db.schema
        .createIndex("replication_runs_create_time_idx")
        .on("replication_runs")
        .columns(["create_time", "uid"])
        .execute();
      // One queued run per rule (triggers coalesce) and one running run per rule.
      for (const state of ["QUEUED", "RUNNING"]) {
        await db.schema
          .createIndex(`replication_runs_one_${state.toLowerCase()}_idx`)
          .on("replication_runs")
          .column("rule_uid")
          .unique()
          .where(sql.ref("state"), "=", sql.lit(state))
          .execute();
      }

      await db.schema
        .createTable("replication_push_cursors")
        .addColumn("org_uid", key, (c) => c.primaryKey())
        .addColumn("cursor_seq", "bigint", (c) => c.notNull())
        .execute();
    },
  };
}
