import { type Kysely, type RawBuilder, type SqlBool, sql } from "kysely";
import { setBounded } from "../../core/bounded-map.js";
import { isAncestorOrSelf, rootOf, selfAndAncestors } from "../../core/uidp.js";
import { parseDeliveryUid, streamDeliveryUid } from "../delivery-uid.js";
import type {
  DeliveryRow,
  DeliveryState,
  EventOutboxStore,
  EventToAppend,
  LeasedLane,
  PendingDelivery,
  StoredEvent,
} from "../event-store.js";
import { REPLICATION_TRIGGER_EVENT_TYPE } from "../replication-store.js";
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
 * A subscription at `subscriptionGroup` receives an event of `eventGroup`: the same group, or a
 * descendant. Written with equality and `substr`, so it holds under any collation.
 */
function receives(
  subscriptionGroup: RawBuilder<string>,
  eventGroup: RawBuilder<string>,
): RawBuilder<SqlBool> {
  return sql<SqlBool>`(${eventGroup} = ${subscriptionGroup} or substr(${eventGroup}, 1, length(${subscriptionGroup}) + 1) = ${subscriptionGroup} || '/')`;
}

/**
 * `e` (an event) is of `s`'s (a subscription's) subtree, spelled as OWES_ANY's ranges so it can
 * seek the `events (group_uid, seq)` index instead of reading every kept event of every
 * organization (the listing of delivered deliveries and replay read up to --events-retention back).
 */
const IN_SUBTREE = sql<SqlBool>`(e.group_uid = s.parent_uid
  or (e.group_uid > s.parent_uid || '/' and e.group_uid < s.parent_uid || '0'))`;

/** `e` (an event) is owed to `s` (a subscription): in its subtree and after its cursor. */
export const OWED = sql<SqlBool>`e.seq > s.cursor_seq and ${receives(sql.ref("s.parent_uid"), sql.ref("e.group_uid"))}`;

/**
 * `s` (a subscription) is owed at least one event: OWED for some event, spelled so that each half
 * seeks the `events (group_uid, seq)` index: its own group's events after its cursor, then its
 * descendants' (`(group/, group0)`: '0' is the byte after '/', the range `selfOrDescendant` in
 * predicates.ts uses for a bound uid, here over columns; byte-order collation, see 0009).
 * Checked for every subscription in each lease round, where OWED's `substr` scanned all events
 * after each cursor, a quiet subscription's through a busy organization's whole backlog.
 */
const OWES_ANY = sql<SqlBool>`(exists (select 1 from events e where e.group_uid = s.parent_uid and e.seq > s.cursor_seq)
  or exists (select 1 from events e where e.group_uid > s.parent_uid || '/' and e.group_uid < s.parent_uid || '0' and e.seq > s.cursor_seq)
  or exists (select 1 from event_redeliveries r where r.subscription_uid = s.uid and r.state = 'pending'))`;

/**
 * `e` (an event) is still needed by a dead letter or a redelivery: a dead letter not requeued, a
 * pending redelivery, or a failed one not requeued (ADR 0049); or it is a push an organization's
 * ON_PUSH replication cursor has not passed yet (ADR 0054).
 */
const NEEDED = sql<SqlBool>`(exists (select 1 from event_dead_letters d where d.event_seq = e.seq and d.requeued_as = '')
  or exists (select 1 from event_redeliveries r where r.event_seq = e.seq
    and (r.state = 'pending' or (r.state = 'failed' and r.requeued_as = '')))
  or (e.type = ${REPLICATION_TRIGGER_EVENT_TYPE} and exists (select 1 from replication_push_cursors c
    where e.seq > c.cursor_seq and (e.group_uid = c.org_uid
      or (e.group_uid > c.org_uid || '/' and e.group_uid < c.org_uid || '0')))))`;

/**
 * Deletes the events no subscription still owes and no dead letter or redelivery needs (with
 * `before`: only those older), and returns how many; the delivered redeliveries and requeued dead
 * letters of each go with it. The candidates are read first without a write lock (on SQLite the
 * scan would otherwise hold the database's write lock); the delete checks the same condition
 * again, in one statement, so a subscription or dead letter written in between is seen.
 */
export async function pruneEvents(ctx: SqlContext, before?: number): Promise<number> {
  let unowed = sql<SqlBool>`not exists (select 1 from subscriptions s where ${OWED}) and not ${NEEDED}`;
  if (before !== undefined) unowed = sql<SqlBool>`e.time < ${before} and ${unowed}`;
  const candidates = await ctx.db.selectFrom("events as e").select("e.seq").where(unowed).execute();
  let pruned = 0;
  for (let i = 0; i < candidates.length; i += PRUNE_CHUNK) {
    const seqs = candidates.slice(i, i + PRUNE_CHUNK).map((c) => c.seq);
    const result = await ctx.db
      .deleteFrom("events as e")
      .where("e.seq", "in", seqs)
      .where(unowed)
      .executeTakeFirst();
    pruned += Number(result.numDeletedRows);
    if (result.numDeletedRows === 0n) continue;
    // What named the deleted events only as history.
    const gone = sql<SqlBool>`not exists (select 1 from events e where e.seq = event_seq)`;
    await ctx.db.deleteFrom("event_redeliveries").where("event_seq", "in", seqs).where(gone).execute();
    await ctx.db.deleteFrom("event_dead_letters").where("event_seq", "in", seqs).where(gone).execute();
  }
  return pruned;
}

/** Events an EventOutboxStore keeps once read, for the other subscriptions that owe them. */
const RECENT_EVENTS = 4096;

/**
 * Events deleted per statement by pruneEvents: bounded bind parameters, and on SQLite a bounded
 * time holding the write lock (500 held it for up to ~7 ms, stalling the API's writes behind it).
 */
export const PRUNE_CHUNK = 100;

// The statements of every append, compiled once (per number of groups): an API write pays for
// these on the request's own thread.
const selectSubscribers = precompiledBySize((db: Kysely<Database>, groups: number) =>
  db
    .selectFrom("subscriptions")
    .select("uid")
    .where(
      "parent_uid",
      "in",
      Array.from({ length: groups }, () => ""),
    ),
);
const insertEvent = precompiled((db) =>
  db.insertInto("events").values({
    id: "",
    type: "",
    source: "",
    subject: "",
    group_uid: "",
    time: 0,
    extensions: "",
    data: "",
  }),
);

const selectPushCursor = precompiled((db: Kysely<Database>) =>
  db.selectFrom("replication_push_cursors").select("org_uid").where("org_uid", "=", ""),
);

/**
 * A push of an organization with ON_PUSH replication rules (it has a push cursor) is kept even when
 * no subscription receives it: replication's trigger reads it from the outbox (ADR 0054).
 */
async function replicationWants(tx: SqlContext, event: EventToAppend): Promise<boolean> {
  if (event.type !== REPLICATION_TRIGGER_EVENT_TYPE) return false;
  return (await selectPushCursor(tx, [rootOf(event.groupUid)])).length > 0;
}

/** Advisory-lock class of outbox appends (PostgreSQL), the second key is the organization's hash. */
const APPEND_LOCK_CLASS = 0x77686172; // "whar"

/** The events a transaction appended, written right before it commits. */
interface PendingAppends {
  roots: Set<string>;
  rows: unknown[][];
}
const appendsOf = new WeakMap<SqlContext, PendingAppends>();

/**
 * Writes a transaction's appended events. On PostgreSQL, `seq` comes from a sequence when the row
 * is inserted, while other transactions may commit in another order; a cursor that moved past a
 * seq would then never see an event that commits later with a lower one. So each organization's
 * appends take an advisory lock until their commit, and draw their seqs only once they hold it:
 * within an organization (a subscription only receives events of its own), seq order is commit
 * order. Writing the events last keeps the lock short and means a transaction holding it waits for
 * nothing else, so it cannot deadlock with row locks; roots are locked in sorted order. SQLite
 * allows one writer at a time, so its order is commit order already.
 */
async function writeAppends(tx: SqlContext, appends: PendingAppends): Promise<void> {
  await lockAppends(tx, appends.roots);
  for (const row of appends.rows) await insertEvent(tx, row);
}

/**
 * On PostgreSQL, waits until no other transaction is appending events of these organizations and
 * keeps them from starting until this transaction ends (see writeAppends); nothing on SQLite.
 */
export async function lockAppends(tx: SqlContext, roots: Iterable<string>): Promise<void> {
  if (tx.dialect.name !== "postgres") return;
  for (const root of [...roots].sort()) {
    await sql`select pg_advisory_xact_lock(${APPEND_LOCK_CLASS}, hashtext(${root}))`.execute(tx.db);
  }
}

/**
 * EventOutboxStore over `events`, the delivery columns of `subscriptions` (lease, cursor, failed
 * attempts) and `event_dead_letters`.
 *
 * Lanes are leased with a compare-and-set on `lease_until` in one UPDATE; on PostgreSQL the
 * candidate rows are also taken `FOR NO KEY UPDATE SKIP LOCKED`, so concurrent workers pick different
 * lanes instead of queueing on the same rows. A finished lane's `lease_until` becomes `now`, so the
 * next lease round serves the lanes that waited longest first.
 */
export function createEventOutboxStore(ctx: SqlContext): EventOutboxStore {
  const { db } = ctx;

  /**
   * Events read lately, by seq. An event never changes once committed and its seq is never reused
   * (AUTOINCREMENT on SQLite, a sequence on PostgreSQL; cursors rely on that too), and the
   * subscriptions of an organization read the same events: each lane reads only seqs, then the
   * rows of the events not here, so ten subscriptions read and parse an event's row once, not ten
   * times. Callers must not change the events they get.
   */
  const recentEvents = new Map<number, StoredEvent>();

  /** The events with these seqs, from recentEvents or read; a seq deleted meanwhile is missing. */
  async function eventsBySeq(seqs: readonly number[]): Promise<Map<number, StoredEvent>> {
    const found = new Map<number, StoredEvent>();
    const missing: number[] = [];
    for (const seq of seqs) {
      const event = recentEvents.get(seq);
      if (event) found.set(seq, event);
      else missing.push(seq);
    }
    if (missing.length === 0) return found;
    const rows = await db
      .selectFrom("events as e")
      .select(EVENT_COLUMNS)
      .where(
        "e.seq",
        "in",
        missing.map((seq) => BigInt(seq)),
      )
      .execute();
    for (const row of rows) {
      const event = toStoredEvent(row);
      found.set(event.seq, event);
      setBounded(recentEvents, event.seq, event, RECENT_EVENTS);
    }
    return found;
  }

  /** Pending deliveries of one subscription after `afterSeq` (the first one carries the lane's attempts when included). */
  async function owed(subscriptionUid: string, afterSeq: number | undefined, limit: number) {
    let query = db
      .selectFrom("subscriptions as s")
      .innerJoin("events as e", (join) => join.on(OWED))
      .select(["s.cursor_seq", "s.attempts", "s.last_attempt_time", "s.last_status", "s.last_error", "e.seq"])
      .where("s.uid", "=", subscriptionUid)
      .orderBy("e.seq")
      .limit(limit);
    if (afterSeq !== undefined) query = query.where("e.seq", ">", BigInt(afterSeq));
    const rows = await query.execute();
    const events = await eventsBySeq(rows.map((r) => readInt(r.seq)));
    const owedRows = [];
    for (const [i, r] of rows.entries()) {
      // Deleted between the two reads: the subscription was deleted, or another worker moved its cursor.
      const event = events.get(readInt(r.seq));
      if (!event) continue;
      // The lane's first pending event: the first row, unless the page starts past the cursor.
      const first = i === 0 && (afterSeq === undefined || BigInt(afterSeq) <= r.cursor_seq);
      owedRows.push({
        event,
        attempts: first ? readInt(r.attempts) : 0,
        lastAttemptTime: first ? readInt(r.last_attempt_time) : 0,
        lastStatus: first ? readInt(r.last_status) : 0,
        lastError: first ? r.last_error : "",
      });
    }
    return owedRows;
  }

  /** A redelivery row with its event as the API lists it (undefined when the event is gone). */
  const REDELIVERY_COLUMNS = [
    "r.seq as r_seq",
    "r.uid as r_uid",
    "r.subscription_uid as r_subscription_uid",
    "r.redelivery_of as r_redelivery_of",
    "r.state as r_state",
    "r.attempts as r_attempts",
    "r.last_attempt_time as r_last_attempt_time",
    "r.last_status as r_last_status",
    "r.last_error as r_last_error",
  ] as const;
  type RedeliveryColumns = EventColumns & {
    r_seq: bigint;
    r_uid: string;
    r_subscription_uid: string;
    r_redelivery_of: string;
    r_state: string;
    r_attempts: bigint;
    r_last_attempt_time: bigint;
    r_last_status: bigint;
    r_last_error: string;
  };
  const toRedeliveryRow = (r: RedeliveryColumns): DeliveryRow => ({
    id: readInt(r.r_seq),
    uid: r.r_uid,
    subscriptionUid: r.r_subscription_uid,
    state: r.r_state as DeliveryState,
    redeliveryOf: r.r_redelivery_of,
    attempts: readInt(r.r_attempts),
    lastAttemptTime: readInt(r.r_last_attempt_time),
    lastStatus: readInt(r.r_last_status),
    lastError: r.r_last_error,
    event: toStoredEvent(r),
  });
  const redeliveriesFrom = (from: Kysely<Database>) =>
    from
      .selectFrom("event_redeliveries as r")
      .innerJoin("events as e", "e.seq", "r.event_seq")
      .select([...REDELIVERY_COLUMNS, ...EVENT_COLUMNS]);

  /** The stream deliveries of a subscription it has passed since it was created (not dead letters). */
  async function delivered(subscriptionUid: string, afterId: number | undefined, limit: number) {
    let query = db
      .selectFrom("subscriptions as s")
      .innerJoin("events as e", (join) =>
        join.on(sql<SqlBool>`e.seq > s.start_seq and e.seq <= s.cursor_seq and ${IN_SUBTREE}`),
      )
      .select(EVENT_COLUMNS)
      .where("s.uid", "=", subscriptionUid)
      .where(
        sql<SqlBool>`not exists (select 1 from event_dead_letters d where d.subscription_uid = s.uid and d.event_seq = e.seq)`,
      )
      .orderBy("e.seq")
      .limit(limit);
    if (afterId !== undefined) query = query.where("e.seq", ">", BigInt(afterId));
    return (await query.execute()).map(
      (r): DeliveryRow => ({
        id: readInt(r.seq),
        uid: streamDeliveryUid(subscriptionUid, readInt(r.seq)),
        subscriptionUid,
        state: "delivered",
        redeliveryOf: "",
        attempts: 0,
        lastAttemptTime: 0,
        lastStatus: 0,
        lastError: "",
        event: toStoredEvent(r),
      }),
    );
  }

  /** The dead letters of the stream, not requeued, after `afterId`. */
  async function streamDeadLetters(subscriptionUid: string, afterId: number | undefined, limit: number) {
    let query = db
      .selectFrom("event_dead_letters as d")
      .innerJoin("events as e", "e.seq", "d.event_seq")
      .select(["d.attempts", "d.last_attempt_time", "d.last_status", "d.last_error", ...EVENT_COLUMNS])
      .where("d.subscription_uid", "=", subscriptionUid)
      .where("d.requeued_as", "=", "")
      .orderBy("d.event_seq")
      .limit(limit);
    if (afterId !== undefined) query = query.where("d.event_seq", ">", BigInt(afterId));
    return (await query.execute()).map(
      (r): DeliveryRow => ({
        id: readInt(r.seq),
        uid: streamDeliveryUid(subscriptionUid, readInt(r.seq)),
        subscriptionUid,
        state: "failed",
        redeliveryOf: "",
        attempts: readInt(r.attempts),
        lastAttemptTime: readInt(r.last_attempt_time),
        lastStatus: readInt(r.last_status),
        lastError: r.last_error,
        event: toStoredEvent(r),
      }),
    );
  }

  /** The stream delivery of event `seq` to the subscription, in whatever state it is. */
  async function streamDelivery(subscriptionUid: string, seq: number): Promise<DeliveryRow | undefined> {
    const sub = await db
      .selectFrom("subscriptions")
      .select(["parent_uid", "cursor_seq", "start_seq"])
      .where("uid", "=", subscriptionUid)
      .executeTakeFirst();
    if (!sub) return undefined;
    // Read, not from recentEvents: it must see whether the event was pruned.
    const stored = await db
      .selectFrom("events as e")
      .select(EVENT_COLUMNS)
      .where("e.seq", "=", BigInt(seq))
      .executeTakeFirst();
    const event = stored && toStoredEvent(stored);
    if (!event || !isAncestorOrSelf(sub.parent_uid, event.groupUid)) return undefined;
    const uid = streamDeliveryUid(subscriptionUid, seq);
    const dead = await db
      .selectFrom("event_dead_letters")
      .selectAll()
      .where("subscription_uid", "=", subscriptionUid)
      .where("event_seq", "=", BigInt(seq))
      .executeTakeFirst();
    const base = { id: seq, uid, subscriptionUid, redeliveryOf: "", event };
    if (dead) {
      return {
        ...base,
        state: "failed",
        attempts: readInt(dead.attempts),
        lastAttemptTime: readInt(dead.last_attempt_time),
        lastStatus: readInt(dead.last_status),
        lastError: dead.last_error,
      };
    }
    if (BigInt(seq) > sub.cursor_seq) {
      const [first] = await owed(subscriptionUid, seq - 1, 1);
      if (!first || first.event.seq !== seq) return undefined;
      return { ...base, state: "pending", ...first, event };
    }
    if (BigInt(seq) <= sub.start_seq) return undefined;
    return { ...base, state: "delivered", attempts: 0, lastAttemptTime: 0, lastStatus: 0, lastError: "" };
  }

  return {
    append(event) {
      return ctx.transaction(async (tx) => {
        const groups = selfAndAncestors(event.groupUid);
        const subscribers = await selectSubscribers(tx, groups.length, groups);
        if (subscribers.length === 0 && !(await replicationWants(tx, event))) return 0;
        let appends = appendsOf.get(tx);
        if (!appends) {
          const created: PendingAppends = { roots: new Set(), rows: [] };
          appendsOf.set(tx, created);
          tx.beforeCommit(() => writeAppends(tx, created));
          appends = created;
        }
        appends.roots.add(rootOf(event.groupUid));
        appends.rows.push(eventValues(event));
        return subscribers.length;
      });
    },

    async leaseLanes({ owner, now, leaseMs, limit, staleBefore }) {
      /** The lane in `table` is free: its lease ended, or its owner stopped heart-beating. */
      const free = (table: string) => {
        const ended = sql<SqlBool>`${sql.ref(`${table}.lease_until`)} <= ${now}`;
        if (staleBefore === undefined) return ended;
        const leaseOwner = sql.ref(`${table}.lease_owner`);
        return sql<SqlBool>`(${ended} or (${leaseOwner} <> ${owner} and exists (select 1 from dispatcher_owners o
          where o.owner = ${leaseOwner} and o.heartbeat_time < ${staleBefore})))`;
      };
      const leasable = (locking: boolean) => {
        const candidates = db
          .selectFrom("subscriptions as s")
          .select("s.uid")
          .where(free("s"))
          .where(sql<SqlBool>`s.retry_time <= ${now}`)
          .where(OWES_ANY)
          .orderBy("s.lease_until")
          .orderBy("s.uid")
          .limit(limit);
        // On PostgreSQL, concurrent workers skip each other's candidates instead of queueing on them.
        return locking && ctx.dialect.rowLocks ? candidates.forNoKeyUpdate().skipLocked() : candidates;
      };
      // Most rounds find every lane with work already leased: answer those with a plain read,
      // since any write takes SQLite's write lock from the API's writes.
      const waiting = await leasable(false).execute();
      if (waiting.length === 0) return [];
      // One statement, outside a transaction: on SQLite the write lock is held for just that.
      // The compare-and-set on the lease keeps a lane someone leased meanwhile theirs (on
      // PostgreSQL the condition is checked again on the row another statement just updated: its
      // new owner heart-beat before it leased, so it does not read as stale).
      const leaseUntil = now + leaseMs;
      const rows = await db
        .updateTable("subscriptions")
        .set({ lease_owner: owner, lease_until: leaseUntil })
        .where("uid", "in", leasable(true))
        .where(free("subscriptions"))
        .returning(["uid", "parent_uid", "sink"])
        .execute();
      // RETURNING has no order: the lanes that waited longest come first, as the read found them.
      const rank = new Map(waiting.map((w, i) => [w.uid, i]));
      const at = (uid: string) => rank.get(uid) ?? waiting.length;
      return rows
        .sort((a, b) => at(a.uid) - at(b.uid) || (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0))
        .map(
          (row): LeasedLane => ({
            subscriptionUid: row.uid,
            groupUid: row.parent_uid,
            sink: row.sink,
            leaseUntil,
          }),
        );
    },

    async heartbeat({ owner, now, host, pid, startTime, forgetBefore }) {
      await db
        .insertInto("dispatcher_owners")
        .values({ owner, heartbeat_time: now, host, pid, start_time: startTime })
        .onConflict((c) => c.column("owner").doUpdateSet({ heartbeat_time: now }))
        .execute();
      if (forgetBefore === undefined) return;
      await db
        .deleteFrom("dispatcher_owners")
        .where("heartbeat_time", "<", BigInt(forgetBefore))
        .where("owner", "<>", owner)
        .execute();
    },

    async retireOwner(owner) {
      await db.deleteFrom("dispatcher_owners").where("owner", "=", owner).execute();
    },

    async markOwnerDead(owner, heardAt) {
      await db
        .updateTable("dispatcher_owners")
        .set({ heartbeat_time: heardAt })
        .where("owner", "=", owner)
        .where("heartbeat_time", ">", BigInt(heardAt))
        .execute();
    },

    async owners() {
      const rows = await db.selectFrom("dispatcher_owners").selectAll().orderBy("owner").execute();
      return rows.map((r) => ({
        owner: r.owner,
        heartbeatTime: readInt(r.heartbeat_time),
        host: r.host,
        pid: readInt(r.pid),
        startTime: readInt(r.start_time),
      }));
    },

    async pending(subscriptionUid, limit) {
      // Redeliveries first: they were asked for by hand, and are few.
      const again = await db
        .selectFrom("event_redeliveries")
        .select(["uid", "attempts", "event_seq"])
        .where("subscription_uid", "=", subscriptionUid)
        .where("state", "=", "pending")
        .orderBy("seq")
        .limit(limit)
        .execute();
      const againEvents = await eventsBySeq(again.map((r) => readInt(r.event_seq)));
      const out: PendingDelivery[] = [];
      for (const r of again) {
        const event = againEvents.get(readInt(r.event_seq));
        if (event) out.push({ id: event.seq, attempts: readInt(r.attempts), event, redelivery: r.uid });
      }
      if (out.length >= limit) return out;
      for (const o of await owed(subscriptionUid, undefined, limit - out.length)) {
        out.push({ id: o.event.seq, attempts: o.attempts, event: o.event });
      }
      return out;
    },

    finish({ subscriptionUid, owner, delivered, redelivered = [], failure, now }) {
      const last = delivered.at(-1);
      let cursor = last === undefined ? undefined : BigInt(last);
      const again = failure?.redelivery === undefined ? undefined : failure;
      const streamFailure = again ? undefined : failure;
      // The failed attempts stay on the subscription until its first pending event is done with.
      let attempts = { attempts: 0, last_attempt_time: 0, last_status: 0, last_error: "" };
      let retryTime = failure && !failure.dead ? failure.retryTime : 0;
      if (streamFailure?.dead) cursor = BigInt(streamFailure.deliveryId);
      else if (streamFailure) {
        attempts = {
          attempts: streamFailure.attempts,
          last_attempt_time: now,
          last_status: streamFailure.status,
          last_error: streamFailure.error,
        };
        retryTime = streamFailure.retryTime;
      }
      const moved = cursor !== undefined || streamFailure !== undefined;
      const freeLane = (from: Kysely<Database>) => {
        let update = from
          .updateTable("subscriptions")
          .set({ lease_owner: "", lease_until: now, retry_time: retryTime })
          .where("uid", "=", subscriptionUid)
          .where("lease_owner", "=", owner);
        if (moved) update = update.set(attempts);
        // Never backwards: a late finish of an expired lease must not re-open what others sent since.
        if (cursor !== undefined) {
          update = update.set({
            cursor_seq: sql`case when cursor_seq < ${cursor} then ${cursor} else cursor_seq end`,
          });
        }
        return update.executeTakeFirst();
      };
      // Without a dead letter or redeliveries it is one statement, outside a transaction: on
      // SQLite the write lock is held for just that.
      if (!streamFailure?.dead && !again && redelivered.length === 0) return freeLane(db).then(() => {});
      return ctx.transaction(async (tx) => {
        const result = await freeLane(tx.db);
        if (result.numUpdatedRows === 0n) return;
        if (streamFailure?.dead) {
          await tx.db
            .insertInto("event_dead_letters")
            .values({
              subscription_uid: subscriptionUid,
              event_seq: streamFailure.deliveryId,
              attempts: streamFailure.attempts,
              last_attempt_time: now,
              last_status: streamFailure.status,
              last_error: streamFailure.error,
            })
            .execute();
        }
        for (const sent of redelivered) {
          await tx.db
            .updateTable("event_redeliveries")
            .set({
              state: "delivered",
              attempts: sql`attempts + 1`,
              last_attempt_time: now,
              last_status: sent.status,
              last_error: "",
            })
            .where("uid", "=", sent.uid)
            .where("subscription_uid", "=", subscriptionUid)
            .where("state", "=", "pending")
            .execute();
        }
        if (again?.redelivery !== undefined) {
          await tx.db
            .updateTable("event_redeliveries")
            .set({
              state: again.dead ? "failed" : "pending",
              attempts: again.attempts,
              last_attempt_time: now,
              last_status: again.status,
              last_error: again.error,
            })
            .where("uid", "=", again.redelivery)
            .where("subscription_uid", "=", subscriptionUid)
            .where("state", "=", "pending")
            .execute();
        }
      });
    },

    prune(args) {
      return pruneEvents(ctx, args?.before);
    },

    async deliveredCount(subscriptionUid) {
      const [stream, again] = await Promise.all([
        db
          .selectFrom("subscriptions as s")
          .innerJoin("events as e", (join) =>
            join.on(sql<SqlBool>`e.seq > s.start_seq and e.seq <= s.cursor_seq and ${IN_SUBTREE}`),
          )
          .select(sql<bigint>`count(*)`.as("n"))
          .where("s.uid", "=", subscriptionUid)
          .where(
            sql<SqlBool>`not exists (select 1 from event_dead_letters d where d.subscription_uid = s.uid and d.event_seq = e.seq)`,
          )
          .executeTakeFirstOrThrow(),
        db
          .selectFrom("event_redeliveries as r")
          .innerJoin("events as e", "e.seq", "r.event_seq")
          .select(sql<bigint>`count(*)`.as("n"))
          .where("r.subscription_uid", "=", subscriptionUid)
          .where("r.state", "=", "delivered")
          .executeTakeFirstOrThrow(),
      ]);
      return readInt(stream.n) + readInt(again.n);
    },

    async deliveries({ subscriptionUid, state, afterId, limit }) {
      if (state === "delivered") return delivered(subscriptionUid, afterId, limit);
      // Dead letters all come before the cursor and pending deliveries after it: in id (seq)
      // order, the dead letters first.
      const rows: DeliveryRow[] =
        state === "pending" ? [] : await streamDeadLetters(subscriptionUid, afterId, limit);
      if (state !== "failed" && rows.length < limit) {
        for (const o of await owed(subscriptionUid, afterId, limit - rows.length)) {
          const uid = streamDeliveryUid(subscriptionUid, o.event.seq);
          rows.push({ id: o.event.seq, uid, subscriptionUid, state: "pending", redeliveryOf: "", ...o });
        }
      }
      return rows;
    },

    async redeliveries({ subscriptionUid, state, afterId, limit }) {
      let query = redeliveriesFrom(db)
        .where("r.subscription_uid", "=", subscriptionUid)
        .orderBy("r.seq")
        .limit(limit);
      if (state === "pending" || state === "delivered") query = query.where("r.state", "=", state);
      else if (state === "failed")
        query = query.where("r.state", "=", "failed").where("r.requeued_as", "=", "");
      else {
        query = query.where(
          sql<SqlBool>`(r.state = 'pending' or (r.state = 'failed' and r.requeued_as = ''))`,
        );
      }
      if (afterId !== undefined) query = query.where("r.seq", ">", BigInt(afterId));
      return (await query.execute()).map(toRedeliveryRow);
    },

    async delivery(uid) {
      const parsed = parseDeliveryUid(uid);
      if (!parsed) return undefined;
      if (parsed.kind === "stream") return streamDelivery(parsed.subscriptionUid, parsed.seq);
      const row = await redeliveriesFrom(db).where("r.uid", "=", uid).executeTakeFirst();
      return row && toRedeliveryRow(row);
    },

    requeue({ subscriptionUid, deliveries: wanted, now }) {
      return ctx.transaction(async (tx) => {
        const written: DeliveryRow[] = [];
        for (let i = 0; i < wanted.length; i += PRUNE_CHUNK) {
          const chunk = wanted.slice(i, i + PRUNE_CHUNK);
          const kept = await tx.db
            .selectFrom("events")
            .select("seq")
            .where(
              "seq",
              "in",
              chunk.map((d) => BigInt(d.eventSeq)),
            )
            .execute();
          const keptSeqs = new Set(kept.map((k) => readInt(k.seq)));
          const rows = chunk.filter((d) => keptSeqs.has(d.eventSeq));
          if (rows.length === 0) continue;
          await tx.db
            .insertInto("event_redeliveries")
            .values(
              rows.map((d) => ({
                uid: d.uid,
                subscription_uid: subscriptionUid,
                event_seq: d.eventSeq,
                redelivery_of: d.redeliveryOf,
                state: "pending",
                create_time: now,
              })),
            )
            .execute();
          for (const d of rows) {
            const of = d.redeliveryOf === "" ? undefined : parseDeliveryUid(d.redeliveryOf);
            if (of?.kind === "stream") {
              await tx.db
                .updateTable("event_dead_letters")
                .set({ requeued_as: d.uid })
                .where("subscription_uid", "=", subscriptionUid)
                .where("event_seq", "=", BigInt(of.seq))
                .where("requeued_as", "=", "")
                .execute();
            } else if (of?.kind === "redelivery") {
              await tx.db
                .updateTable("event_redeliveries")
                .set({ requeued_as: d.uid })
                .where("uid", "=", d.redeliveryOf)
                .where("state", "=", "failed")
                .where("requeued_as", "=", "")
                .execute();
            }
          }
          const inserted = await redeliveriesFrom(tx.db)
            .where(
              "r.uid",
              "in",
              rows.map((d) => d.uid),
            )
            .orderBy("r.seq")
            .execute();
          written.push(...inserted.map(toRedeliveryRow));
        }
        return written;
      });
    },

    async deadLetters(subscriptionUid) {
      const [stream, again] = await Promise.all([
        db
          .selectFrom("event_dead_letters as d")
          .innerJoin("events as e", "e.seq", "d.event_seq")
          .select("d.event_seq")
          .where("d.subscription_uid", "=", subscriptionUid)
          .where("d.requeued_as", "=", "")
          .execute(),
        db
          .selectFrom("event_redeliveries as r")
          .innerJoin("events as e", "e.seq", "r.event_seq")
          .select(["r.uid", "r.event_seq", "r.seq"])
          .where("r.subscription_uid", "=", subscriptionUid)
          .where("r.state", "=", "failed")
          .where("r.requeued_as", "=", "")
          .orderBy("r.seq")
          .execute(),
      ]);
      const out = [
        ...stream.map((d) => ({
          uid: streamDeliveryUid(subscriptionUid, readInt(d.event_seq)),
          eventSeq: readInt(d.event_seq),
        })),
        ...again.map((r) => ({ uid: r.uid, eventSeq: readInt(r.event_seq) })),
      ];
      return out.sort((a, b) => a.eventSeq - b.eventSeq);
    },

    async replayable({ subscriptionUid, since }) {
      const rows = await db
        .selectFrom("subscriptions as s")
        .innerJoin("events as e", (join) => join.on(sql<SqlBool>`e.seq <= s.cursor_seq and ${IN_SUBTREE}`))
        .select(["e.seq", "s.start_seq"])
        .where("s.uid", "=", subscriptionUid)
        .where("e.time", ">=", BigInt(since))
        .where(
          sql<SqlBool>`not exists (select 1 from event_redeliveries r where r.subscription_uid = s.uid
            and r.event_seq = e.seq and r.state = 'pending')`,
        )
        .orderBy("e.seq")
        .execute();
      return rows.map((r) => ({ seq: readInt(r.seq), streamed: r.seq > r.start_seq }));
    },
  };
}

/** The insert's bind values, in the order of `insertEvent`'s columns. */
function eventValues(event: EventToAppend): unknown[] {
  return [
    event.id,
    event.type,
    event.source,
    event.subject,
    event.groupUid,
    event.time,
    JSON.stringify(event.extensions),
    typeof event.data === "string" ? event.data : event.data(),
  ];
}
