import type { Migration } from "kysely";
import { type Kysely, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * The outbox keeps one cursor per subscription instead of one delivery row per (event,
 * subscription) (ADR 0012, session 8 addendum):
 *
 * - `subscriptions.cursor_seq`: the last event seq the subscription is done with; the events of its
 *   subtree after it are its pending deliveries. `attempts` and `last_*` describe the failed
 *   attempts at the first of them.
 * - `event_dead_letters`: the deliveries given up on (the former 'failed' rows).
 *
 * Existing rows carry over: a subscription's cursor lands right before its oldest pending delivery
 * (or at the newest event when it owes none), its failures become dead letters, and
 * `event_deliveries` is dropped.
 */
export function eventCursorsMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const counter = (name: string) =>
        db.schema
          .alterTable("subscriptions")
          .addColumn(name, "bigint", (c) => c.notNull().defaultTo(0))
          .execute();
      await counter("cursor_seq");
      await counter("attempts");
      await counter("last_attempt_time");
      await counter("last_status");
      await db.schema
        .alterTable("subscriptions")
        .addColumn("last_error", "text", (c) => c.notNull().defaultTo(""))
        .execute();
      // Pruning looks for subscriptions still short of an event.
      await db.schema
        .createIndex("subscriptions_cursor_seq_idx")
        .on("subscriptions")
        .column("cursor_seq")
        .execute();

      await db.schema
        .createTable("event_dead_letters")
        .addColumn("subscription_uid", key, (c) =>
          c.notNull().references("subscriptions.uid").onDelete("cascade"),
        )
        .addColumn("event_seq", "bigint", (c) => c.notNull())
        .addColumn("attempts", "bigint", (c) => c.notNull())
        .addColumn("last_attempt_time", "bigint", (c) => c.notNull())
        .addColumn("last_status", "bigint", (c) => c.notNull())
        .addColumn("last_error", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("event_dead_letters_pk", ["subscription_uid", "event_seq"])
        .execute();
      // Pruning keeps the events a dead letter names.
      await db.schema
        .createIndex("event_dead_letters_event_seq_idx")
        .on("event_dead_letters")
        .column("event_seq")
        .execute();

      await sql`
        update subscriptions set cursor_seq = coalesce(
          (select min(d.event_seq) - 1 from event_deliveries d
            where d.subscription_uid = subscriptions.uid and d.state = 'pending'),
          (select max(seq) from events),
          0)`.execute(db);
      for (const column of ["attempts", "last_attempt_time", "last_status", "last_error"]) {
        await sql`
          update subscriptions set ${sql.ref(column)} = (
            select ${sql.ref(`d.${column}`)} from event_deliveries d
            where d.subscription_uid = subscriptions.uid and d.state = 'pending'
              and d.event_seq = subscriptions.cursor_seq + 1)
          where exists (select 1 from event_deliveries d
            where d.subscription_uid = subscriptions.uid and d.state = 'pending'
              and d.event_seq = subscriptions.cursor_seq + 1)`.execute(db);
      }
      await sql`
        insert into event_dead_letters
          (subscription_uid, event_seq, attempts, last_attempt_time, last_status, last_error)
        select subscription_uid, event_seq, attempts, last_attempt_time, last_status, last_error
        from event_deliveries where state = 'failed'`.execute(db);
      await db.schema.dropTable("event_deliveries").execute();
    },
  };
}
