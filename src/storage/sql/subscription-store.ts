import { type Selectable, sql } from "kysely";
import { rootOf } from "../../core/uidp.js";
import type { SubscriptionRow, SubscriptionStatus, SubscriptionStore } from "../event-store.js";
import { readInt } from "./dialect.js";
import { lockAppends, OWED } from "./event-outbox-store.js";
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
 * SubscriptionStore over `subscriptions`. A new subscription's cursor starts at the newest event, so
 * it receives the events that commit after it; deleting one cascades to its dead letters (foreign
 * key) and then prunes the events nobody is owed any more.
 */
export function createSubscriptionStore(ctx: SqlContext): SubscriptionStore {
  const { db } = ctx;
  const statuses: SubscriptionStore["statuses"] = async (uids) => {
    const out = new Map<string, SubscriptionStatus>();
    if (uids.length === 0) return out;
    const [pending, failed, again, subs] = await Promise.all([
      db
        .selectFrom("subscriptions as s")
        .innerJoin("events as e", (join) => join.on(OWED))
        .select(["s.uid as uid", sql<bigint>`count(*)`.as("n")])
        .where("s.uid", "in", uids)
        .groupBy("s.uid")
        .execute(),
      db
        .selectFrom("event_dead_letters")
        .select(["subscription_uid as uid", sql<bigint>`count(*)`.as("n")])
        .where("subscription_uid", "in", uids)
        .where("requeued_as", "=", "")
        .groupBy("subscription_uid")
        .execute(),
      // Redeliveries (ADR 0049): pending ones are owed, failed ones not requeued are dead letters.
      db
        .selectFrom("event_redeliveries")
        .select(["subscription_uid as uid", "state", sql<bigint>`count(*)`.as("n")])
        .where("subscription_uid", "in", uids)
        .where((eb) =>
          eb.or([
            eb("state", "=", "pending"),
            eb.and([eb("state", "=", "failed"), eb("requeued_as", "=", "")]),
          ]),
        )
        .groupBy(["subscription_uid", "state"])
        .execute(),
      db.selectFrom("subscriptions").select(["uid", "retry_time"]).where("uid", "in", uids).execute(),
    ]);
    for (const sub of subs) out.set(sub.uid, { pending: 0, failed: 0, retryTime: readInt(sub.retry_time) });
    for (const row of pending) {
      const status = out.get(row.uid);
      if (status) status.pending += readInt(row.n);
    }
    for (const row of failed) {
      const status = out.get(row.uid);
      if (status) status.failed += readInt(row.n);
    }
    for (const row of again) {
      const status = out.get(row.uid);
      if (status && row.state === "pending") status.pending += readInt(row.n);
      else if (status) status.failed += readInt(row.n);
    }
    return out;
  };

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

    insert(row) {
      return ctx.transaction(async (tx) => {
        // On PostgreSQL, appends of the organization in flight commit first and count as before it.
        await lockAppends(tx, [rootOf(row.groupUid)]);
        await tx.db
          .insertInto("subscriptions")
          .values({
            uid: row.uid,
            parent_uid: parentColumn(row.uid, row.groupUid),
            sink: row.sink,
            cursor_seq: sql`(select coalesce(max(seq), 0) from events)`,
            start_seq: sql`(select coalesce(max(seq), 0) from events)`,
            create_time: row.createTime,
            update_time: row.createTime,
          })
          .execute();
        tx.changed("subscriptions");
      });
    },

    delete(uid) {
      return ctx.transaction(async (tx) => {
        const result = await tx.db.deleteFrom("subscriptions").where("uid", "=", uid).executeTakeFirst();
        if (result.numDeletedRows === 0n) return false;
        // The events it was owed stay for the events retention (replays of other subscriptions);
        // the retention sweep prunes them (ADR 0049).
        tx.changed("subscriptions", "event_dead_letters", "event_redeliveries");
        return true;
      });
    },

    async status(uid) {
      return (await statuses([uid])).get(uid) ?? { pending: 0, failed: 0, retryTime: 0 };
    },

    statuses,

    async backlog(pendingLimit) {
      const [pending, deadLetters, again, oldest] = await Promise.all([
        sql<{ n: bigint | number }>`select count(*) as n from (select 1 as one from subscriptions s
          inner join events e on ${OWED} limit ${Math.max(0, Math.trunc(pendingLimit))}) owed`.execute(db),
        db
          .selectFrom("event_dead_letters")
          .select(sql<bigint>`count(*)`.as("n"))
          .where("requeued_as", "=", "")
          .executeTakeFirst(),
        // Redeliveries (ADR 0049): pending ones are owed, failed ones not requeued are dead letters.
        db
          .selectFrom("event_redeliveries")
          .select([
            sql<bigint>`sum(case when state = 'pending' then 1 else 0 end)`.as("pending"),
            sql<bigint>`sum(case when state = 'failed' and requeued_as = '' then 1 else 0 end)`.as("failed"),
          ])
          .executeTakeFirst(),
        // Each subscription's first owed event: its own group's, then its subgroups' (OWES_ANY's seeks).
        sql<{ time: bigint | number }>`select e.time from events e where e.seq = (select min(first_seq) from (
          select (select min(o.seq) from events o where o.group_uid = s.parent_uid and o.seq > s.cursor_seq) as first_seq
            from subscriptions s
          union all
          select (select min(d.seq) from events d where d.group_uid > s.parent_uid || '/'
              and d.group_uid < s.parent_uid || '0' and d.seq > s.cursor_seq)
            from subscriptions s) firsts)`.execute(db),
      ]);
      const time = oldest.rows[0]?.time;
      return {
        pending: Math.min(
          Math.max(0, Math.trunc(pendingLimit)),
          readInt(pending.rows[0]?.n ?? 0) + readInt(again?.pending ?? 0n),
        ),
        deadLetters: readInt(deadLetters?.n ?? 0n) + readInt(again?.failed ?? 0n),
        oldestPendingTime: time === undefined ? undefined : readInt(time),
      };
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
