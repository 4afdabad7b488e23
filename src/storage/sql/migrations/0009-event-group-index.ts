import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * An index on `events (group_uid, seq)`, so finding whether a subscription is owed anything seeks
 * its group's events after its cursor instead of scanning every event after it: each lease round
 * checks every subscription, and a quiet organization's subscriptions scanned the whole backlog of
 * a busy one (2.8 ms per round with 10 idle subscriptions beside a busy one, on the bench machine).
 * On PostgreSQL `events.group_uid` becomes `COLLATE "C"` like every other key (0001), so the
 * subtree range `[group, group || '0')` compares bytes.
 */
export function eventGroupIndexMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === "postgres") {
        await sql`alter table events alter column group_uid type text collate "C"`.execute(db);
      }
      await db.schema
        .createIndex("events_group_uid_seq_idx")
        .on("events")
        .columns(["group_uid", "seq"])
        .execute();
    },
  };
}
