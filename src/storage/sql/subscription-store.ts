import { type Selectable, type SqlBool, sql } from "kysely";
import type { SubscriptionRow, SubscriptionStore } from "../event-store.js";
import { readInt } from "./dialect.js";
import { lockEvents } from "./event-outbox-store.js";
import { listWindow, type SortColumns, STANDARD_SORT } from "./list-window.js";
import { commonPredicates } from "./predicates.js";
import type { SubscriptionsTable } from "./schema.js";
import { parentColumn, type SqlContext } from "./sql-context.js";

/** Subscriptions are never updated: update_time orders like create_time. */
const SUBSCRIPTION_SORT: SortColumns = {
  uid: STANDARD_SORT.uid,
  create_time: STANDARD_SORT.create_time,
  update_time: STANDARD_SORT.create_time,
};

function toSubscriptionRow(r: Selectable<SubscriptionsTable>): SubscriptionRow {
  return { uid: r.uid, groupUid: r.parent_uid, sink: r.sink, createTime: readInt(r.create_time) };
}

/**
 * SubscriptionStore over `subscriptions`; deleting one cascades to its deliveries (foreign key) and
 * then removes the events nobody is owed any more.
 */
export function createSubscriptionStore(ctx: SqlContext): SubscriptionStore {
  const { db } = ctx;
  return {
    async get(uid) {
      const row = await db.selectFrom("subscriptions").selectAll().where("uid", "=", uid).executeTakeFirst();
      return row && toSubscriptionRow(row);
    },

    list(filter, window) {
      return listWindow(
        ctx,
        {
          table: "subscriptions",
          from: db.selectFrom("subscriptions"),
          where: (uid) => commonPredicates(filter, uid),
          sort: SUBSCRIPTION_SORT,
          columns: ["uid", "parent_uid", "sink", "create_time"],
          toRow: toSubscriptionRow,
        },
        window,
      );
    },

    async insert(row) {
      await db
        .insertInto("subscriptions")
        .values({
          uid: row.uid,
          parent_uid: parentColumn(row.uid, row.groupUid),
          sink: row.sink,
          create_time: row.createTime,
          update_time: row.createTime,
        })
        .execute();
      ctx.changed("subscriptions");
    },

    delete(uid) {
      return ctx.transaction(async (tx) => {
        // Like finish: lock the events first so a lane finishing one of them at the same time
        // cannot leave it unpruned.
        if (tx.dialect.rowLocks) await lockEvents(tx, { ofSubscription: uid });
        const result = await tx.db.deleteFrom("subscriptions").where("uid", "=", uid).executeTakeFirst();
        if (result.numDeletedRows === 0n) return false;
        await tx.db
          .deleteFrom("events")
          .where(sql<SqlBool>`not exists (select 1 from event_deliveries d where d.event_seq = events.seq)`)
          .execute();
        tx.changed("subscriptions", "event_deliveries", "events");
        return true;
      });
    },

    async status(uid) {
      const [counts, sub] = await Promise.all([
        db
          .selectFrom("event_deliveries")
          .select(["state", sql<bigint>`count(*)`.as("n")])
          .where("subscription_uid", "=", uid)
          .groupBy("state")
          .execute(),
        db.selectFrom("subscriptions").select("retry_time").where("uid", "=", uid).executeTakeFirst(),
      ]);
      const of = (state: string) => readInt(counts.find((c) => c.state === state)?.n ?? 0n);
      return { pending: of("pending"), failed: of("failed"), retryTime: sub ? readInt(sub.retry_time) : 0 };
    },

    async subscribedGroups() {
      const rows = await db.selectFrom("subscriptions").select("parent_uid").distinct().execute();
      return rows.map((r) => r.parent_uid);
    },

    async countByGroup(groupUid) {
      const row = await db
        .selectFrom("subscriptions")
        .select(sql<bigint>`count(*)`.as("n"))
        .where("parent_uid", "=", groupUid)
        .executeTakeFirst();
      return readInt(row?.n ?? 0n);
    },
  };
}
