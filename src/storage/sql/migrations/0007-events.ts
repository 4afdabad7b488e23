import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * The events outbox (ADR 0012):
 * - `subscriptions`: webhook sinks under groups, with the delivery lane's lease (`lease_owner`,
 *   `lease_until`) and back-off (`retry_time`), so several processes share the work.
 * - `events`: one row per change that some subscription wants, written in the change's
 *   transaction; `seq` orders them.
 * - `event_deliveries`: one row per (event, subscription) still to deliver ('pending') or given up
 *   on ('failed', the dead letters). Delivered rows are deleted, and an event without deliveries
 *   with them.
 */
export function eventsMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("subscriptions")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("sink", "text", (c) => c.notNull())
        .addColumn("lease_owner", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("lease_until", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("retry_time", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("subscriptions_parent_uid_idx")
        .on("subscriptions")
        .column("parent_uid")
        .execute();

      await db.schema
        .createTable("events")
        .addColumn("seq", dialect === "postgres" ? "bigserial" : "integer", (c) =>
          dialect === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn("id", "text", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("source", "text", (c) => c.notNull())
        .addColumn("subject", "text", (c) => c.notNull())
        .addColumn("group_uid", "text", (c) => c.notNull())
        .addColumn("time", "bigint", (c) => c.notNull())
        .addColumn("extensions", "text", (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("event_deliveries")
        .addColumn("id", dialect === "postgres" ? "bigserial" : "integer", (c) =>
          dialect === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn("subscription_uid", key, (c) =>
          c.notNull().references("subscriptions.uid").onDelete("cascade"),
        )
        .addColumn("event_seq", "bigint", (c) => c.notNull().references("events.seq").onDelete("cascade"))
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("attempts", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("last_attempt_time", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("last_status", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("last_error", "text", (c) => c.notNull().defaultTo(""))
        .execute();
      // A lane reads its pending deliveries in event order; the API lists a subscription's dead letters.
      await db.schema
        .createIndex("event_deliveries_lane_idx")
        .on("event_deliveries")
        .columns(["subscription_uid", "state", "event_seq"])
        .execute();
      // Pruning an event checks whether any delivery still names it.
      await db.schema
        .createIndex("event_deliveries_event_seq_idx")
        .on("event_deliveries")
        .column("event_seq")
        .execute();
    },
  };
}
