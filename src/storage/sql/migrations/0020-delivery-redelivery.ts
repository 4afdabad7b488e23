import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * Webhook redelivery (ADR 0049):
 * - `subscriptions.start_seq`: the cursor a subscription started at. Its stream's delivered
 *   deliveries are the kept events of its subtree in `(start_seq, cursor_seq]` without a dead
 *   letter. Existing subscriptions start at their cursor (what they delivered before was pruned).
 * - `event_redeliveries`: deliveries queued again (`:redeliver`, `:redrive`, `:replay`), one row
 *   each, with their own state (`pending`, `delivered`, `failed`) and attempts; `seq` orders them.
 * - `event_dead_letters.requeued_as` and `event_redeliveries.requeued_as`: the uid of the delivery
 *   that sends a dead letter again; a requeued dead letter no longer counts as one.
 * - `events (time)`: the retention sweep (`--events-retention`) finds old events by time.
 */
export function deliveryRedeliveryMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable("subscriptions")
        .addColumn("start_seq", "bigint", (c) => c.notNull().defaultTo(0))
        .execute();
      await sql`update subscriptions set start_seq = cursor_seq`.execute(db);
      await db.schema
        .alterTable("event_dead_letters")
        .addColumn("requeued_as", "text", (c) => c.notNull().defaultTo(""))
        .execute();

      await db.schema
        .createTable("event_redeliveries")
        .addColumn("seq", dialect === "postgres" ? "bigserial" : "integer", (c) =>
          dialect === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn("uid", key, (c) => c.notNull().unique())
        .addColumn("subscription_uid", key, (c) =>
          c.notNull().references("subscriptions.uid").onDelete("cascade"),
        )
        .addColumn("event_seq", "bigint", (c) => c.notNull())
        .addColumn("redelivery_of", "text", (c) => c.notNull())
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("attempts", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("last_attempt_time", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("last_status", "bigint", (c) => c.notNull().defaultTo(0))
        .addColumn("last_error", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("requeued_as", "text", (c) => c.notNull().defaultTo(""))
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .execute();
      // A lane reads its pending redeliveries in order; the API lists a subscription's by state.
      await db.schema
        .createIndex("event_redeliveries_lane_idx")
        .on("event_redeliveries")
        .columns(["subscription_uid", "state", "seq"])
        .execute();
      // Pruning an event checks whether a redelivery still needs it.
      await db.schema
        .createIndex("event_redeliveries_event_seq_idx")
        .on("event_redeliveries")
        .column("event_seq")
        .execute();
      await db.schema.createIndex("events_time_idx").on("events").column("time").execute();
    },
  };
}
