import { type Kysely, type SqlBool, sql } from "kysely";
import { selfAndAncestors } from "../../core/uidp.js";
import type { DeliveryRow, EventOutboxStore, LeasedLane, StoredEvent } from "../event-store.js";
import { readInt } from "./dialect.js";
import type { Database } from "./schema.js";
import { precompiled, precompiledBySize, type SqlContext } from "./sql-context.js";

interface EventColumns {
  seq: bigint;
  id: string;
  type: string;
  source: string;
  subject: string;
  group_uid: string;
  time: bigint;
  extensions: string;
  data: string;
}

function toStoredEvent(r: EventColumns): StoredEvent {
  return {
    seq: readInt(r.seq),
    id: r.id,
    type: r.type,
    source: r.source,
    subject: r.subject,
    groupUid: r.group_uid,
    time: readInt(r.time),
    extensions: JSON.parse(r.extensions) as Record<string, string>,
    data: r.data,
  };
}

const EVENT_COLUMNS = [
  "e.seq",
  "e.id",
  "e.type",
  "e.source",
  "e.subject",
  "e.group_uid",
  "e.time",
  "e.extensions",
  "e.data",
] as const;

/**
 * Locks `events` rows FOR UPDATE (PostgreSQL only), in seq order so lockers never deadlock: those
 * of `seqs`, or those a subscription is owed. Every transaction that drops deliveries (finish,
 * subscription delete) takes these locks first, so the one dropping an event's last delivery runs
 * after the others have committed, sees their deletions, and prunes the event.
 */
export async function lockEvents(
  ctx: SqlContext,
  which: { seqs: readonly bigint[] } | { ofSubscription: string },
): Promise<void> {
  const query = ctx.db.selectFrom("events").select("seq").orderBy("seq").forUpdate();
  await ("seqs" in which
    ? query.where("seq", "in", [...which.seqs])
    : query.where(
        "seq",
        "in",
        ctx.db
          .selectFrom("event_deliveries")
          .select("event_seq")
          .where("subscription_uid", "=", which.ofSubscription),
      )
  ).execute();
}

// The statements of every append, compiled once (per number of groups or subscribers): an API
// write that has subscribers pays for these on the request's own thread.
const subscribersOf = (db: Kysely<Database>, groups: number) =>
  db
    .selectFrom("subscriptions")
    .select("uid")
    .where(
      "parent_uid",
      "in",
      Array.from({ length: groups }, () => ""),
    );
const selectSubscribers = precompiledBySize(subscribersOf);
const selectSubscribersForKeyShare = precompiledBySize((db, groups) =>
  subscribersOf(db, groups).forKeyShare(),
);
const insertEvent = precompiled((db) =>
  db
    .insertInto("events")
    .values({
      id: "",
      type: "",
      source: "",
      subject: "",
      group_uid: "",
      time: 0,
      extensions: "",
      data: "",
    })
    .returning("seq"),
);
const insertDeliveries = precompiledBySize((db, rows) =>
  db
    .insertInto("event_deliveries")
    .values(Array.from({ length: rows }, () => ({ subscription_uid: "", event_seq: 0, state: "pending" }))),
);

/**
 * EventOutboxStore over `events`, `event_deliveries` and the lease columns of `subscriptions`.
 *
 * Lanes are leased with a compare-and-set on `lease_until` inside a transaction; on PostgreSQL the
 * candidate rows are also taken `FOR UPDATE SKIP LOCKED`, so concurrent workers pick different
 * lanes instead of queueing on the same rows. A finished lane's `lease_until` becomes `now`, so the
 * next lease round serves the lanes that waited longest first.
 */
export function createEventOutboxStore(ctx: SqlContext): EventOutboxStore {
  const { db } = ctx;
  return {
    append(event) {
      return ctx.transaction(async (tx) => {
        const groups = selfAndAncestors(event.groupUid);
        // A subscription deleted between this read and the delivery insert would fail the insert's
        // foreign key, and with it the user's change: hold the rows (delete waits; leases do not).
        const subscribers = await (tx.dialect.rowLocks ? selectSubscribersForKeyShare : selectSubscribers)(
          tx,
          groups.length,
          groups,
        );
        if (subscribers.length === 0) return 0;
        const [inserted] = await insertEvent(tx, [
          event.id,
          event.type,
          event.source,
          event.subject,
          event.groupUid,
          event.time,
          JSON.stringify(event.extensions),
          typeof event.data === "string" ? event.data : event.data(),
        ]);
        if (inserted === undefined) throw new Error("events: the insert returned no seq");
        await insertDeliveries(
          tx,
          subscribers.length,
          subscribers.flatMap((s) => [s.uid, inserted.seq, "pending"]),
        );
        return subscribers.length;
      });
    },

    async leaseLanes({ owner, now, leaseMs, limit }) {
      const leasable = (from: Kysely<Database>) =>
        from
          .selectFrom("subscriptions as s")
          .select(["s.uid", "s.parent_uid", "s.sink"])
          .where(sql<SqlBool>`s.lease_until <= ${now}`)
          .where(sql<SqlBool>`s.retry_time <= ${now}`)
          .where(
            sql<SqlBool>`exists (select 1 from event_deliveries d where d.subscription_uid = s.uid and d.state = 'pending')`,
          )
          .orderBy("s.lease_until")
          .orderBy("s.uid")
          .limit(limit);
      // Most rounds find every lane with work already leased: answer those without a write
      // transaction, which on SQLite would take the database's write lock from the API's writes.
      if ((await leasable(db).execute()).length === 0) return [];
      return ctx.transaction(async (tx) => {
        let candidates = leasable(tx.db);
        // NO KEY UPDATE: lanes being appended to (KEY SHARE) stay leasable; other leasers skip them.
        if (tx.dialect.rowLocks) candidates = candidates.forNoKeyUpdate().skipLocked();
        const rows = await candidates.execute();
        const leased: LeasedLane[] = [];
        const leaseUntil = now + leaseMs;
        for (const row of rows) {
          const result = await tx.db
            .updateTable("subscriptions")
            .set({ lease_owner: owner, lease_until: leaseUntil })
            .where("uid", "=", row.uid)
            .where(sql<SqlBool>`lease_until <= ${now}`)
            .executeTakeFirst();
          if (result.numUpdatedRows === 1n) {
            leased.push({ subscriptionUid: row.uid, groupUid: row.parent_uid, sink: row.sink, leaseUntil });
          }
        }
        return leased;
      });
    },

    async pending(subscriptionUid, limit) {
      const rows = await db
        .selectFrom("event_deliveries as d")
        .innerJoin("events as e", "e.seq", "d.event_seq")
        .select(["d.id as delivery_id", "d.attempts", ...EVENT_COLUMNS])
        .where("d.subscription_uid", "=", subscriptionUid)
        .where("d.state", "=", "pending")
        .orderBy("d.event_seq")
        .limit(limit)
        .execute();
      return rows.map((r) => ({
        id: readInt(r.delivery_id),
        attempts: readInt(r.attempts),
        event: toStoredEvent(r),
      }));
    },

    finish({ subscriptionUid, owner, delivered, failure, now }) {
      return ctx.transaction(async (tx) => {
        const seqs = [...new Set(delivered.map((d) => BigInt(d.eventSeq)))];
        // Lock order everywhere on PostgreSQL: events (by seq), then the subscription, then its
        // deliveries — the order a subscription delete takes them in (its cascade comes last).
        if (tx.dialect.rowLocks && seqs.length > 0) await lockEvents(tx, { seqs });
        const retryTime = failure && !failure.dead ? failure.retryTime : 0;
        await tx.db
          .updateTable("subscriptions")
          .set({ lease_owner: "", lease_until: now, retry_time: retryTime })
          .where("uid", "=", subscriptionUid)
          .where("lease_owner", "=", owner)
          .execute();
        if (delivered.length > 0) {
          // Under READ COMMITTED, two lanes finishing one event at once would each still see the
          // other's uncommitted delivery and neither prune the event; the events lock above
          // serializes them, so the later one's statements see the earlier one's deletions.
          await tx.db
            .deleteFrom("event_deliveries")
            .where(
              "id",
              "in",
              delivered.map((d) => BigInt(d.id)),
            )
            .execute();
          await tx.db
            .deleteFrom("events")
            .where("seq", "in", seqs)
            .where(sql<SqlBool>`not exists (select 1 from event_deliveries d where d.event_seq = events.seq)`)
            .execute();
        }
        if (failure) {
          await tx.db
            .updateTable("event_deliveries")
            .set({
              state: failure.dead ? "failed" : "pending",
              attempts: failure.attempts,
              last_attempt_time: now,
              last_status: failure.status,
              last_error: failure.error,
            })
            .where("id", "=", BigInt(failure.deliveryId))
            .execute();
        }
      });
    },

    async deliveries({ subscriptionUid, state, afterId, limit }) {
      let query = db
        .selectFrom("event_deliveries as d")
        .innerJoin("events as e", "e.seq", "d.event_seq")
        .select([
          "d.id as delivery_id",
          "d.subscription_uid",
          "d.state",
          "d.attempts",
          "d.last_attempt_time",
          "d.last_status",
          "d.last_error",
          ...EVENT_COLUMNS,
        ])
        .where("d.subscription_uid", "=", subscriptionUid)
        .orderBy("d.id")
        .limit(limit);
      if (state !== undefined) query = query.where("d.state", "=", state);
      if (afterId !== undefined) query = query.where("d.id", ">", BigInt(afterId));
      const rows = await query.execute();
      return rows.map(
        (r): DeliveryRow => ({
          id: readInt(r.delivery_id),
          subscriptionUid: r.subscription_uid,
          state: r.state === "failed" ? "failed" : "pending",
          attempts: readInt(r.attempts),
          lastAttemptTime: readInt(r.last_attempt_time),
          lastStatus: readInt(r.last_status),
          lastError: r.last_error,
          event: toStoredEvent(r),
        }),
      );
    },
  };
}
