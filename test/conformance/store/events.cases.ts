import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import type { ListWindow, SortField } from "../../../src/core/list.js";
import { newChildUid, newRootUid } from "../../../src/core/uidp.js";
import { streamDeliveryUid } from "../../../src/storage/delivery-uid.js";
import type {
  EventToAppend,
  LaneOutcome,
  SubscriptionFilter,
  SubscriptionRow,
} from "../../../src/storage/event-store.js";
import { PRUNE_CHUNK } from "../../../src/storage/sql/event-outbox-store.js";
import type { OpenStoreOptions } from "../../../src/storage/sql/open-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { childUid, groupRow, T0 } from "./fixtures.js";

const SECOND = 1000;

/** A subscription under `groupUid` (with a chosen last segment when given). */
function subRow(groupUid: string, segment?: string, createTime = T0): SubscriptionRow {
  const uid = segment === undefined ? newChildUid(groupUid) : childUid(groupUid, segment);
  return { uid, groupUid, sink: `https://hooks.example/${uid.slice(-16)}`, createTime };
}

let eventCounter = 0;

/** An event of `groupUid`; `name` goes into the subject, an extension and the body. */
function eventOf(groupUid: string, name: string, data?: EventToAppend["data"]): EventToAppend {
  eventCounter++;
  return {
    id: randomUUID(),
    type: "dev.wharf.api.registry.repo.created.v1",
    source: "//wharf.test/api",
    subject: `${groupUid}#${name}`,
    groupUid,
    time: T0 + eventCounter,
    extensions: { bodytype: "wharf.v1.Repo", name },
    data: data ?? JSON.stringify({ actor: "alice", body: { name } }),
  };
}

/** The subjects of a subscription's pending deliveries, in the order `pending` returns them. */
async function pendingSubjects(store: Store, subscriptionUid: string, limit = 100): Promise<string[]> {
  return (await store.events.pending(subscriptionUid, limit)).map((p) => p.event.subject);
}

/** Runs one query straight on the database behind `options` (to see rows the interface hides). */
async function rawRows<T>(options: OpenStoreOptions, query: string): Promise<T[]> {
  if (options.databaseUrl) {
    const client = new pg.Client({ connectionString: options.databaseUrl });
    await client.connect();
    try {
      return (await client.query(query)).rows as T[];
    } finally {
      await client.end();
    }
  }
  const sqlite = new BetterSqlite3(options.sqlitePath ?? "", { readonly: true });
  try {
    return sqlite.prepare(query).all() as T[];
  } finally {
    sqlite.close();
  }
}

/** Subjects of every row of the `events` table, in seq order. */
async function storedEventSubjects(options: OpenStoreOptions): Promise<string[]> {
  return (await rawRows<{ subject: string }>(options, "select subject from events order by seq")).map(
    (r) => r.subject,
  );
}

/** Number of rows of the `event_dead_letters` table. */
async function storedDeadLetterCount(options: OpenStoreOptions): Promise<number> {
  const rows = await rawRows<{ n: number | string | bigint }>(
    options,
    "select count(*) as n from event_dead_letters",
  );
  return Number(rows[0]?.n ?? -1);
}

/** The uids of the lanes `owner` leases at `now`, in the order returned. */
async function lease(store: Store, owner: string, now: number, limit = 100, leaseMs = 10 * SECOND) {
  const lanes = await store.events.leaseLanes({ owner, now, leaseMs, limit });
  return lanes.map((l) => l.subscriptionUid);
}

/** Finishes `subscriptionUid`'s batch for `owner`: nothing delivered, no failure, unless given. */
function finish(
  store: Store,
  outcome: Partial<LaneOutcome> & Pick<LaneOutcome, "subscriptionUid" | "owner" | "now">,
) {
  return store.events.finish({ delivered: [], ...outcome });
}

/** Every row of a subscription list walked page by page (`limit` rows each) via the `after` cursor. */
async function walkSubscriptions(
  store: Store,
  filter: SubscriptionFilter,
  field: SortField,
  desc: boolean,
  limit: number,
): Promise<{ rows: SubscriptionRow[]; total: bigint }> {
  const rows: SubscriptionRow[] = [];
  let total = -1n;
  let window: ListWindow = { order: { field, desc }, limit, skip: 0 };
  for (let pages = 0; pages < 100; pages++) {
    const slice = await store.subscriptions.list(filter, window);
    assert.ok(slice.rows.length <= limit + 1, "a slice holds at most limit + 1 rows");
    if (total === -1n) total = slice.total;
    else assert.equal(slice.total, total, "the total is the same on every page");
    const page = slice.rows.slice(0, limit);
    rows.push(...page);
    const last = page.at(-1);
    if (slice.rows.length <= limit || last === undefined) return { rows, total };
    const value = field === "uid" ? last.uid : last.createTime;
    window = { order: { field, desc }, limit, skip: 0, after: { value, uid: last.uid } };
  }
  assert.fail("paging did not end");
}

/** Rows in (createTime, uid) or uid order, both ascending or both descending. */
function expectedOrder(rows: readonly SubscriptionRow[], field: SortField, desc: boolean): string[] {
  const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);
  const sign = desc ? -1 : 1;
  return [...rows]
    .sort((a, b) => sign * ((field === "uid" ? 0 : cmp(a.createTime, b.createTime)) || cmp(a.uid, b.uid)))
    .map((r) => r.uid);
}

/**
 * SubscriptionStore and EventOutboxStore (ADR 0012): subscriptions CRUD, lists and status; the
 * outbox's fan-out on append, lane leases (exclusive, also under concurrency), back-off, dead
 * letters, pruning of delivered events, and the deliveries listing.
 */
export function eventCases(db: TestDatabase): void {
  /** A Store on a new, empty database, with its options for raw inspection. */
  const fresh = async () => {
    const options = await db.freshOptions();
    return { store: await db.open(options), options };
  };
  /**
   * Handles on the database behind `store`: on PostgreSQL two more pools, like separate server
   * processes; on SQLite only `store` (one handle per file per process).
   */
  const handlesOf = async (store: Store, options: OpenStoreOptions): Promise<Store[]> =>
    store.dialect === "postgres" ? [store, await db.open(options), await db.open(options)] : [store];

  describe("events: subscriptions", () => {
    it("insert/get round-trip; countByGroup counts direct children; delete is true once, then false", async () => {
      const { store } = await fresh();
      const org = newRootUid();
      const team = newChildUid(org);
      const a = subRow(org, undefined, T0 + 5);
      const b = subRow(org);
      const c = subRow(team);
      for (const s of [a, b, c]) await store.subscriptions.insert(s);

      assert.deepEqual(await store.subscriptions.get(a.uid), a, "every field round-trips");
      assert.deepEqual(await store.subscriptions.get(c.uid), c, "a subgroup's subscription round-trips");
      assert.equal(await store.subscriptions.get(newChildUid(org)), undefined, "an unknown uid is undefined");
      assert.equal(await store.subscriptions.countByGroup(org), 2, "only subscriptions directly under org");
      assert.equal(await store.subscriptions.countByGroup(team), 1, "the subgroup's own subscription");
      assert.equal(await store.subscriptions.countByGroup(newRootUid()), 0, "a group without any");

      assert.equal(await store.subscriptions.delete(a.uid), true, "an existing subscription is deleted");
      assert.equal(await store.subscriptions.get(a.uid), undefined, "gone after delete");
      assert.equal(await store.subscriptions.delete(a.uid), false, "deleting it again is false");
      assert.equal(
        await store.subscriptions.delete(newChildUid(org)),
        false,
        "a never-existing uid is false",
      );
      assert.equal(await store.subscriptions.countByGroup(org), 1, "countByGroup drops with the delete");
      assert.deepEqual(await store.subscriptions.get(b.uid), b, "the sibling subscription is untouched");
    });

    it("status of a fresh or unknown subscription is all zero", async () => {
      const { store } = await fresh();
      const s = subRow(newRootUid());
      await store.subscriptions.insert(s);
      assert.deepEqual(
        await store.subscriptions.status(s.uid),
        { pending: 0, failed: 0, retryTime: 0 },
        "fresh",
      );
      assert.deepEqual(
        await store.subscriptions.status(newChildUid(newRootUid())),
        { pending: 0, failed: 0, retryTime: 0 },
        "unknown",
      );
    });

    it("backlog counts owed deliveries up to its limit, dead letters, and dates the oldest owed event", async () => {
      const { store } = await fresh();
      assert.deepEqual(
        await store.subscriptions.backlog(100),
        { pending: 0, deadLetters: 0, oldestPendingTime: undefined },
        "nothing subscribed",
      );
      const org = newRootUid();
      const team = newChildUid(org);
      const atOrg = subRow(org);
      const atTeam = subRow(team);
      const elsewhere = subRow(newRootUid());
      for (const s of [atOrg, atTeam, elsewhere]) await store.subscriptions.insert(s);
      const teamEvent = eventOf(team, "t1");
      await store.events.append(teamEvent);
      await store.events.append(eventOf(org, "o1"));
      await store.events.append(eventOf(team, "t2"));
      // Owed: atOrg t1, o1, t2; atTeam t1, t2; elsewhere nothing.
      assert.deepEqual(
        await store.subscriptions.backlog(100),
        { pending: 5, deadLetters: 0, oldestPendingTime: teamEvent.time },
        "a subgroup's event counts for both subscriptions and is the oldest",
      );
      assert.equal((await store.subscriptions.backlog(3)).pending, 3, "counting stops at the limit");

      // atTeam gives up on t1 (a dead letter) and delivers t2; atOrg delivers t1 only.
      assert.deepEqual((await lease(store, "w1", T0)).sort(), [atOrg.uid, atTeam.uid].sort());
      const [t1, t2] = await store.events.pending(atTeam.uid, 10);
      assert.ok(t1 && t2, "atTeam owes two");
      await store.events.finish({
        subscriptionUid: atTeam.uid,
        owner: "w1",
        delivered: [],
        failure: { deliveryId: t1.id, attempts: 3, status: 500, error: "boom", dead: true, retryTime: 0 },
        now: T0 + 1,
      });
      await finish(store, { subscriptionUid: atOrg.uid, owner: "w1", delivered: [t1.id], now: T0 + 1 });
      const [o1] = await store.events.pending(atOrg.uid, 1);
      assert.deepEqual(
        await store.subscriptions.backlog(100),
        { pending: 3, deadLetters: 1, oldestPendingTime: o1?.event.time },
        "a dead letter leaves the backlog; the oldest owed event moves on",
      );
    });

    it("list pages by uid and create_time in both directions; update_time reads as create_time", async () => {
      const { store } = await fresh();
      const org = newRootUid();
      const team = newChildUid(org);
      // Ties on create_time so the uid tie-break matters.
      const rows = [
        subRow(org, "00000000000000a0", T0 + 3),
        subRow(org, "00000000000000b0", T0 + 1),
        subRow(org, "00000000000000c0", T0 + 2),
        subRow(org, "00000000000000d0", T0 + 1),
        subRow(team, "00000000000000a1", T0 + 2),
        subRow(team, "00000000000000b1", T0 + 9),
        subRow(team, "00000000000000c1", T0),
      ];
      for (const r of rows) await store.subscriptions.insert(r);

      for (const field of ["uid", "create_time"] as const) {
        for (const desc of [false, true]) {
          const what = `${field} ${desc ? "desc" : "asc"}`;
          const expected = expectedOrder(rows, field, desc);
          for (const limit of [2, 3, 100]) {
            const { rows: got, total } = await walkSubscriptions(store, {}, field, desc, limit);
            assert.deepEqual(
              got.map((r) => r.uid),
              expected,
              `${what}, pages of ${limit}`,
            );
            assert.equal(total, BigInt(rows.length), `${what}: total`);
          }
        }
      }
      for (const desc of [false, true]) {
        const byUpdate = await walkSubscriptions(store, {}, "update_time", desc, 2);
        assert.deepEqual(
          byUpdate.rows.map((r) => r.uid),
          expectedOrder(rows, "create_time", desc),
          `update_time ${desc ? "desc" : "asc"} orders like create_time`,
        );
      }
      const skipped = await store.subscriptions.list(
        {},
        { order: { field: "uid", desc: false }, limit: 2, skip: 3 },
      );
      assert.deepEqual(
        skipped.rows.map((r) => r.uid),
        expectedOrder(rows, "uid", false).slice(3, 6),
        "skip, then limit + 1 rows",
      );
      assert.deepEqual(
        (await store.subscriptions.list({}, { order: { field: "uid", desc: false }, limit: 100, skip: 0 }))
          .rows[0],
        rows[0],
        "listed rows carry every field",
      );
      await assert.rejects(
        store.subscriptions.list({}, { order: { field: "name", desc: false }, limit: 10, skip: 0 }),
        (err: Error & { code?: number }) => err.code === 3,
        "ordering by name is INVALID_ARGUMENT",
      );
    });

    it("list honours within scopes and uidp filters", async () => {
      const { store } = await fresh();
      const org = newRootUid();
      const team = newChildUid(org);
      const sub = newChildUid(team);
      const other = newRootUid();
      const atOrg = subRow(org);
      const atTeam = subRow(team);
      const atSub = subRow(sub);
      const atOther = subRow(other);
      for (const s of [atOrg, atTeam, atSub, atOther]) await store.subscriptions.insert(s);
      const uids = async (filter: SubscriptionFilter) => {
        const slice = await store.subscriptions.list(filter, {
          order: { field: "uid", desc: false },
          limit: 100,
          skip: 0,
        });
        assert.equal(slice.total, BigInt(slice.rows.length), "total matches the single page");
        return slice.rows.map((r) => r.uid).sort();
      };
      const sorted = (...rows: SubscriptionRow[]) => rows.map((r) => r.uid).sort();

      assert.deepEqual(await uids({}), sorted(atOrg, atTeam, atSub, atOther), "no filter: everything");
      assert.deepEqual(
        await uids({ within: { all: true } }),
        sorted(atOrg, atTeam, atSub, atOther),
        "all scopes",
      );
      assert.deepEqual(await uids({ within: { all: false, uids: [] } }), [], "no scope: nothing");
      assert.deepEqual(
        await uids({ within: { all: false, uids: [team] } }),
        sorted(atTeam, atSub),
        "a scope covers its group and descendants, not ancestors",
      );
      assert.deepEqual(
        await uids({ within: { all: false, uids: [sub, other] } }),
        sorted(atSub, atOther),
        "several scopes are ORed",
      );
      assert.deepEqual(await uids({ uidp: { childrenOf: team } }), sorted(atTeam), "childrenOf: direct only");
      assert.deepEqual(
        await uids({ uidp: { descendantsOf: team } }),
        sorted(atTeam, atSub),
        "descendantsOf: the whole subtree",
      );
      assert.deepEqual(
        await uids({ uidp: { ids: [atOrg.uid, atOther.uid, newChildUid(org)] } }),
        sorted(atOrg, atOther),
        "ids: only those that exist",
      );
      assert.deepEqual(
        await uids({ uidp: { descendantsOf: org }, within: { all: false, uids: [sub, other] } }),
        sorted(atSub),
        "uidp and within are ANDed",
      );
    });
  });

  describe("events: outbox", () => {
    it("append with no subscriber at the group or an ancestor stores nothing and never builds data", async () => {
      const { store, options } = await fresh();
      const org = newRootUid();
      const team = newChildUid(org);
      const sibling = newChildUid(org);
      const below = newChildUid(team);
      const subs = [subRow(sibling), subRow(below), subRow(newRootUid())];
      for (const s of subs) await store.subscriptions.insert(s);

      let built = 0;
      const appended = await store.events.append(
        eventOf(team, "nobody", () => {
          built++;
          return "{}";
        }),
      );
      assert.equal(appended, 0, "no delivery created");
      assert.equal(built, 0, "the lazy data is not built");
      for (const s of subs) {
        assert.deepEqual(await store.events.pending(s.uid, 10), [], `no pending delivery for ${s.uid}`);
        assert.deepEqual(
          await store.events.deliveries({ subscriptionUid: s.uid, limit: 10 }),
          [],
          "none listed",
        );
      }
      assert.deepEqual(await storedEventSubjects(options), [], "the events table stays empty");
      assert.deepEqual(await lease(store, "w", T0), [], "no lane has work");
    });

    it("append fans out to subscriptions at the group and every ancestor, and nowhere else", async () => {
      const { store, options } = await fresh();
      const org = newRootUid();
      const team = newChildUid(org);
      const project = newChildUid(team);
      const sibling = newChildUid(team);
      const below = newChildUid(project);
      const atOrg = subRow(org);
      const atTeam1 = subRow(team);
      const atTeam2 = subRow(team);
      const atProject = subRow(project);
      const atSibling = subRow(sibling);
      const atBelow = subRow(below);
      const atOtherOrg = subRow(newRootUid());
      const receivers = [atOrg, atTeam1, atTeam2, atProject];
      const bystanders = [atSibling, atBelow, atOtherOrg];
      for (const s of [...receivers, ...bystanders]) await store.subscriptions.insert(s);

      let built = 0;
      const body = JSON.stringify({ actor: "alice", body: { name: "app", n: 1 } });
      const event = eventOf(project, "app", () => {
        built++;
        return body;
      });
      assert.equal(await store.events.append(event), 4, "one delivery per subscription at project or above");
      assert.equal(built, 1, "the lazy data is built exactly once");

      const seqs = new Set<number>();
      for (const s of receivers) {
        const pending = await store.events.pending(s.uid, 10);
        assert.equal(pending.length, 1, `one pending delivery for ${s.uid}`);
        const [p] = pending;
        assert.ok(p !== undefined, "pending delivery");
        assert.equal(p.attempts, 0, "no attempt yet");
        assert.equal(typeof p.event.seq, "number", "seq is a number");
        seqs.add(p.event.seq);
        const { data: _lazy, ...rest } = event;
        assert.deepEqual(p.event, { ...rest, data: body, seq: p.event.seq }, "the event round-trips");
        const rows = await store.events.deliveries({ subscriptionUid: s.uid, limit: 10 });
        assert.equal(rows.length, 1, "one listed delivery");
        assert.deepEqual(
          rows[0],
          {
            id: p.id,
            uid: streamDeliveryUid(s.uid, p.id),
            subscriptionUid: s.uid,
            state: "pending",
            redeliveryOf: "",
            attempts: 0,
            lastAttemptTime: 0,
            lastStatus: 0,
            lastError: "",
            event: p.event,
          },
          "a fresh delivery as listed",
        );
        assert.deepEqual(
          await store.subscriptions.status(s.uid),
          { pending: 1, failed: 0, retryTime: 0 },
          "status",
        );
      }
      assert.equal(seqs.size, 1, "all deliveries share one stored event");
      for (const s of bystanders) {
        assert.deepEqual(await store.events.pending(s.uid, 10), [], `nothing for bystander ${s.uid}`);
      }
      assert.deepEqual(
        await storedEventSubjects(options),
        [event.subject],
        "one event row, whatever the number of subscriptions",
      );

      assert.equal(
        await store.events.append(eventOf(org, "org-level")),
        1,
        "an org event reaches only the org's",
      );
      assert.deepEqual(
        await pendingSubjects(store, atOrg.uid),
        [event.subject, `${org}#org-level`],
        "org lane",
      );
      assert.deepEqual(await pendingSubjects(store, atTeam1.uid), [event.subject], "team lane unchanged");
      assert.equal(
        await store.events.append(eventOf(below, "deep")),
        5,
        "a deeper event reaches all five above",
      );
      assert.deepEqual(await pendingSubjects(store, atSibling.uid), [], "the sibling still has nothing");
    });

    it("append inside a transaction that throws leaves nothing; one that commits keeps it", async () => {
      const { store, options } = await fresh();
      const org = groupRow("", "events-tx");
      const s = subRow(org.uid);
      await store.subscriptions.insert(s);

      const boom = new Error("boom");
      await assert.rejects(
        store.transaction(async (tx) => {
          await tx.groups.insert(org);
          assert.equal(
            await tx.events.append(eventOf(org.uid, "rolled-back")),
            1,
            "appended in the transaction",
          );
          assert.equal(
            (await tx.events.pending(s.uid, 10)).length,
            0,
            "written right before the commit: not visible inside the transaction",
          );
          throw boom;
        }),
        (err) => err === boom,
        "the transaction rethrows",
      );
      assert.equal(await store.groups.get(org.uid), undefined, "the change is rolled back");
      assert.deepEqual(await store.events.pending(s.uid, 10), [], "no pending delivery");
      assert.deepEqual(
        await store.events.deliveries({ subscriptionUid: s.uid, limit: 10 }),
        [],
        "none listed",
      );
      assert.deepEqual(
        await store.subscriptions.status(s.uid),
        { pending: 0, failed: 0, retryTime: 0 },
        "status",
      );
      assert.deepEqual(await storedEventSubjects(options), [], "no event row");
      assert.deepEqual(await lease(store, "w", T0), [], "no lane has work");

      await store.transaction(async (tx) => {
        await tx.groups.insert(org);
        await tx.events.append(eventOf(org.uid, "committed"));
      });
      assert.equal((await store.groups.get(org.uid))?.name, "events-tx", "the change committed");
      assert.deepEqual(await pendingSubjects(store, s.uid), [`${org.uid}#committed`], "so did its event");
    });

    it("pending returns the lane's oldest deliveries in append order, at most limit", async () => {
      const { store } = await fresh();
      const org = newRootUid();
      const team = newChildUid(org);
      const a = subRow(org);
      const b = subRow(team);
      await store.subscriptions.insert(a);
      await store.subscriptions.insert(b);
      const subjects: string[] = [];
      for (let i = 0; i < 6; i++) {
        // Alternate groups so b's lane has gaps in seq, and vary time against append order.
        const e = eventOf(i % 2 === 0 ? team : org, `e${i}`);
        await store.events.append({ ...e, time: T0 + 100 - i });
        subjects.push(e.subject);
      }
      const all = await store.events.pending(a.uid, 100);
      assert.deepEqual(
        all.map((p) => p.event.subject),
        subjects,
        "a gets every event, oldest first",
      );
      const seqs = all.map((p) => p.event.seq);
      assert.deepEqual(
        seqs,
        [...seqs].sort((x, y) => x - y),
        "seq ascends with append order",
      );
      assert.equal(new Set(seqs).size, seqs.length, "seqs are distinct");
      assert.deepEqual(
        await pendingSubjects(store, a.uid, 4),
        subjects.slice(0, 4),
        "limit 4 gives the first four",
      );
      assert.deepEqual(
        await pendingSubjects(store, a.uid, 1),
        subjects.slice(0, 1),
        "limit 1 gives the oldest",
      );
      assert.deepEqual(
        await pendingSubjects(store, b.uid),
        subjects.filter((_, i) => i % 2 === 0),
        "b gets only the team's events",
      );
      assert.deepEqual(await pendingSubjects(store, b.uid, 2), [subjects[0], subjects[2]], "b's limit");
    });

    it("leaseLanes leases only lanes with pending work, exclusively until the lease runs out", async () => {
      const { store } = await fresh();
      const org = newRootUid();
      const team = newChildUid(org);
      const busy1 = subRow(org);
      const busy2 = subRow(team);
      const idle = subRow(newChildUid(org));
      for (const s of [busy1, busy2, idle]) await store.subscriptions.insert(s);
      await store.events.append(eventOf(team, "e1"));

      const lanes = await store.events.leaseLanes({ owner: "w1", now: T0, leaseMs: 5 * SECOND, limit: 10 });
      assert.deepEqual(
        lanes.map((l) => l.subscriptionUid).sort(),
        [busy1.uid, busy2.uid].sort(),
        "both busy lanes, not the idle one",
      );
      const lane = lanes.find((l) => l.subscriptionUid === busy2.uid);
      assert.deepEqual(
        lane,
        { subscriptionUid: busy2.uid, groupUid: team, sink: busy2.sink, leaseUntil: T0 + 5 * SECOND },
        "a lane carries its group, sink and lease end",
      );
      assert.deepEqual(await lease(store, "w1", T0), [], "the same owner does not get them twice");
      assert.deepEqual(await lease(store, "w2", T0 + 1), [], "another owner gets nothing during the lease");
      assert.deepEqual(await lease(store, "w2", T0 + 5 * SECOND - 1), [], "nor just before it ends");
      assert.deepEqual(
        (await lease(store, "w2", T0 + 5 * SECOND + 1)).sort(),
        [busy1.uid, busy2.uid].sort(),
        "once the lease has run out another owner takes the lanes",
      );
      assert.deepEqual(await lease(store, "w1", T0 + 5 * SECOND + 2), [], "and w1 cannot take them back");

      // An idle lane gets work: it becomes leasable; a finished lane is free at once.
      await store.events.append(eventOf(idle.groupUid, "e2"));
      assert.deepEqual(await lease(store, "w3", T0 + 6 * SECOND), [idle.uid], "the newly busy lane");
      await finish(store, { subscriptionUid: busy1.uid, owner: "w2", now: T0 + 6 * SECOND });
      assert.deepEqual(
        await lease(store, "w3", T0 + 6 * SECOND),
        [busy1.uid],
        "a finished lane is free at once",
      );
    });

    it("a lane whose owner stopped heart-beating is taken over before its lease ends, not while it beats", async () => {
      const { store } = await fresh();
      const org = newRootUid();
      const a = subRow(org);
      const b = subRow(newRootUid());
      const legacy = subRow(newRootUid());
      for (const s of [a, b, legacy]) await store.subscriptions.insert(s);
      await store.events.append(eventOf(org, "e1"));
      await store.events.append(eventOf(b.groupUid, "e2"));
      await store.events.append(eventOf(legacy.groupUid, "e3"));
      const beat = (owner: string, now: number) =>
        store.events.heartbeat({ owner, now, host: "h", pid: 1, startTime: T0 });
      /** What `owner` leases at `now`, taking the lanes of owners silent for 3 s. */
      const takeover = async (owner: string, now: number) => {
        const lanes = await store.events.leaseLanes({
          owner,
          now,
          leaseMs: 60 * SECOND,
          limit: 10,
          staleBefore: now - 3 * SECOND,
        });
        return lanes.map((l) => l.subscriptionUid).sort();
      };

      // "legacy" never heart-beats (a server of an older version): its lane waits for its lease.
      const all = [a.uid, b.uid, legacy.uid].sort();
      assert.deepEqual((await lease(store, "legacy", T0, 10, 60 * SECOND)).sort(), all, "legacy leases all");
      await finish(store, { subscriptionUid: a.uid, owner: "legacy", now: T0 });
      await finish(store, { subscriptionUid: b.uid, owner: "legacy", now: T0 });
      await beat("w1", T0);
      assert.deepEqual(await takeover("w1", T0), [a.uid, b.uid].sort(), "w1 leases the two freed");

      await beat("w2", T0 + 2 * SECOND);
      assert.deepEqual(await takeover("w2", T0 + 2 * SECOND), [], "w1 beat 2 s ago: its lanes stay");
      await beat("w1", T0 + 2 * SECOND);
      assert.deepEqual(await takeover("w2", T0 + 4 * SECOND), [], "w1 beat again: they still stay");
      assert.deepEqual(
        await takeover("w1", T0 + 10 * SECOND),
        [],
        "an owner never takes over its own lanes, however old its heartbeat",
      );
      assert.deepEqual(
        await takeover("w2", T0 + 5 * SECOND + 1),
        [a.uid, b.uid].sort(),
        "w1 silent for over 3 s: w2 takes its lanes, before their lease ends",
      );
      await beat("w2", T0 + 49 * SECOND);
      assert.deepEqual(
        await takeover("w3", T0 + 50 * SECOND),
        [],
        "legacy's lane waits for its lease even though legacy never beat, and w2's rows are w2's",
      );

      const [owed] = await store.events.pending(a.uid, 1);
      assert.ok(owed, "a owes e1");
      await finish(store, {
        subscriptionUid: a.uid,
        owner: "w1",
        now: T0 + 6 * SECOND,
        delivered: [owed.id],
      });
      assert.deepEqual(
        await pendingSubjects(store, a.uid),
        [`${org}#e1`],
        "the dead owner's late finish changes nothing: the lane is w2's",
      );
      await beat("w2", T0 + 60 * SECOND);
      assert.deepEqual(
        await takeover("w3", T0 + 60 * SECOND + 1),
        [legacy.uid],
        "legacy's lane once its lease ended",
      );
    });

    it("heartbeat records an owner once and renews it; forgetBefore and retireOwner delete owners", async () => {
      const { store } = await fresh();
      await store.events.heartbeat({ owner: "w1", now: T0, host: "h1", pid: 11, startTime: T0 - 5 });
      await store.events.heartbeat({ owner: "w2", now: T0, host: "h2", pid: 22, startTime: T0 - 7 });
      await store.events.heartbeat({ owner: "w1", now: T0 + SECOND, host: "h1", pid: 11, startTime: T0 - 5 });
      assert.deepEqual(
        await store.events.owners(),
        [
          { owner: "w1", heartbeatTime: T0 + SECOND, host: "h1", pid: 11, startTime: T0 - 5 },
          { owner: "w2", heartbeatTime: T0, host: "h2", pid: 22, startTime: T0 - 7 },
        ],
        "one row per owner with its latest heartbeat",
      );
      await store.events.heartbeat({
        owner: "w1",
        now: T0 + 2 * SECOND,
        host: "h1",
        pid: 11,
        startTime: T0 - 5,
        forgetBefore: T0 + 2 * SECOND,
      });
      assert.deepEqual(
        (await store.events.owners()).map((o) => o.owner),
        ["w1"],
        "owners silent since before forgetBefore are forgotten, never the one beating",
      );
      await store.events.retireOwner("w1");
      assert.deepEqual(await store.events.owners(), [], "retired");
    });

    it("markOwnerDead makes a just-beating owner's lanes stale at once, moves no heartbeat forward", async () => {
      const { store } = await fresh();
      const a = subRow(newRootUid());
      await store.subscriptions.insert(a);
      await store.events.append(eventOf(a.groupUid, "e1"));
      await store.events.heartbeat({ owner: "dead", now: T0, host: "h", pid: 7, startTime: T0 });
      assert.deepEqual(await lease(store, "dead", T0, 10, 60 * SECOND), [a.uid]);
      const takeover = async (owner: string, now: number) =>
        (
          await store.events.leaseLanes({
            owner,
            now,
            leaseMs: 60 * SECOND,
            limit: 10,
            staleBefore: now - 3 * SECOND,
          })
        ).map((l) => l.subscriptionUid);
      await store.events.heartbeat({ owner: "w2", now: T0 + 1, host: "h", pid: 8, startTime: T0 });
      assert.deepEqual(await takeover("w2", T0 + 1), [], "its heartbeat is fresh: the lane stays");
      await store.events.markOwnerDead("dead", T0 + 1 - 3 * SECOND - 1);
      assert.deepEqual(await takeover("w2", T0 + 2), [a.uid], "known dead: taken at once");
      await store.events.markOwnerDead("w2", T0 + 10 * SECOND);
      assert.equal(
        (await store.events.owners()).find((o) => o.owner === "w2")?.heartbeatTime,
        T0 + 1,
        "a later time is no news: the heartbeat stays",
      );
      await store.events.markOwnerDead("nobody", T0);
      assert.deepEqual(
        (await store.events.owners()).map((o) => o.owner),
        ["dead", "w2"],
        "an unknown owner is not created",
      );
    });

    it("concurrent takeovers of a dead owner's lanes by six owners never hand one lane to two", async () => {
      const { store, options } = await fresh();
      const handles = await handlesOf(store, options);
      const org = newRootUid();
      const LANES = 12;
      const subs = Array.from({ length: LANES }, () => subRow(newChildUid(org)));
      for (const s of subs) await store.subscriptions.insert(s);
      for (const s of subs) await store.events.append(eventOf(s.groupUid, "work"));
      const owners = Array.from({ length: 6 }, (_, i) => `owner-${i}`);
      for (let round = 0; round < 4; round++) {
        const now = T0 + round * 10 * SECOND;
        // Whoever holds the lanes dies: every owner of this round is new and beats now.
        for (const owner of owners) {
          await store.events.heartbeat({
            owner: `${owner}-${round}`,
            now,
            host: "h",
            pid: 1,
            startTime: now,
          });
        }
        const results = await Promise.all(
          owners.map((owner, i) =>
            (handles[i % handles.length] ?? store).events.leaseLanes({
              owner: `${owner}-${round}`,
              now,
              leaseMs: 60 * SECOND,
              limit: 3,
              staleBefore: now - 3 * SECOND,
            }),
          ),
        );
        const all = results.flat().map((l) => l.subscriptionUid);
        assert.equal(new Set(all).size, all.length, `round ${round}: no lane leased twice`);
        if (round === 0) assert.equal(all.length, LANES, "round 0: free lanes, all leased");
        else assert.deepEqual(all.sort(), subs.map((s) => s.uid).sort(), `round ${round}: all taken over`);
        const late = await store.events.leaseLanes({
          owner: "late",
          now: now + SECOND,
          leaseMs: 60 * SECOND,
          limit: 100,
          staleBefore: now - 2 * SECOND,
        });
        assert.deepEqual(late, [], `round ${round}: the live owners keep what they took`);
      }
    });

    it("leaseLanes honours limit and serves the lanes that waited longest first", async () => {
      const { store } = await fresh();
      const org = newRootUid();
      const [a, b, c] = ["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc"].map((seg) =>
        subRow(org, seg),
      );
      assert.ok(a && b && c, "three subscriptions");
      for (const s of [a, b, c]) await store.subscriptions.insert(s);
      await store.events.append(eventOf(org, "e1"));

      assert.equal((await lease(store, "w1", T0, 2)).length, 2, "limit 2 of 3");
      assert.equal((await lease(store, "w1", T0, 2)).length, 1, "the one left");
      assert.deepEqual(await lease(store, "w1", T0, 2), [], "none left");
      // Finished in the order c, a, b: that is the order they have waited since.
      await finish(store, { subscriptionUid: c.uid, owner: "w1", now: T0 + 10 });
      await finish(store, { subscriptionUid: a.uid, owner: "w1", now: T0 + 20 });
      await finish(store, { subscriptionUid: b.uid, owner: "w1", now: T0 + 30 });
      assert.deepEqual(await lease(store, "w2", T0 + 100, 2), [c.uid, a.uid], "longest waiting first");
      assert.deepEqual(await lease(store, "w2", T0 + 100, 2), [b.uid], "then the rest");
    });

    it("concurrent leaseLanes by six owners never hand one lane to two owners", async () => {
      const { store, options } = await fresh();
      const handles = await handlesOf(store, options);
      const org = newRootUid();
      const LANES = 12;
      const subs = Array.from({ length: LANES }, () => subRow(newChildUid(org)));
      for (const s of subs) await store.subscriptions.insert(s);
      await store.events.append(eventOf(org, "fan-out")); // nobody at org itself: no delivery
      for (const s of subs) await store.events.append(eventOf(s.groupUid, "work"));

      const owners = Array.from({ length: 6 }, (_, i) => `owner-${i}`);
      for (let round = 0; round < 8; round++) {
        const now = T0 + round * 10 * SECOND;
        // Round r leases with 5 s leases, so every lane is free again in round r + 1.
        const results = await Promise.all(
          owners.map((owner, i) =>
            (handles[i % handles.length] ?? store).events.leaseLanes({
              owner,
              now,
              leaseMs: 5 * SECOND,
              limit: 3,
            }),
          ),
        );
        const all = results.flat().map((l) => l.subscriptionUid);
        assert.equal(
          new Set(all).size,
          all.length,
          `round ${round}: no lane leased twice (${all.length} leases)`,
        );
        assert.deepEqual(
          all.sort(),
          subs.map((s) => s.uid).sort(),
          `round ${round}: every lane is leased by someone`,
        );
        for (const [i, lanes] of results.entries()) {
          assert.ok(lanes.length <= 3, `round ${round}: owner ${i} got at most its limit`);
          for (const l of lanes) assert.equal(l.leaseUntil, now + 5 * SECOND, "lease end");
        }
        assert.deepEqual(
          await lease(store, "late", now + 1),
          [],
          `round ${round}: nothing left during the leases`,
        );
        // Every other round the owners finish (freeing at once); otherwise the leases just expire.
        if (round % 2 === 0) {
          await Promise.all(
            results.flatMap((lanes, i) =>
              lanes.map((l) =>
                finish(handles[i % handles.length] ?? store, {
                  subscriptionUid: l.subscriptionUid,
                  owner: owners[i] ?? "",
                  now: now + 2 * SECOND,
                }),
              ),
            ),
          );
        }
      }
    });

    it("a non-dead failure keeps the delivery pending, records the attempt and backs the lane off", async () => {
      const { store } = await fresh();
      const org = newRootUid();
      const flaky = subRow(org);
      const healthy = subRow(newRootUid());
      await store.subscriptions.insert(flaky);
      await store.subscriptions.insert(healthy);
      await store.events.append(eventOf(org, "e1"));
      await store.events.append(eventOf(org, "e2"));
      await store.events.append(eventOf(healthy.groupUid, "h1"));

      assert.deepEqual((await lease(store, "w1", T0)).sort(), [flaky.uid, healthy.uid].sort(), "both leased");
      const [first] = await store.events.pending(flaky.uid, 10);
      assert.ok(first !== undefined, "flaky has work");
      await store.events.finish({
        subscriptionUid: flaky.uid,
        owner: "w1",
        delivered: [],
        failure: {
          deliveryId: first.id,
          attempts: 1,
          status: 503,
          error: "unavailable",
          dead: false,
          retryTime: T0 + 60 * SECOND,
        },
        now: T0 + 10,
      });
      await finish(store, { subscriptionUid: healthy.uid, owner: "w1", now: T0 + 10 });

      const rows = await store.events.deliveries({ subscriptionUid: flaky.uid, limit: 10 });
      assert.deepEqual(
        rows.map((r) => [r.id, r.state, r.attempts, r.lastAttemptTime, r.lastStatus, r.lastError]),
        [
          [first.id, "pending", 1, T0 + 10, 503, "unavailable"],
          [rows[1]?.id, "pending", 0, 0, 0, ""],
        ],
        "the failed attempt is recorded on its delivery only, which stays pending",
      );
      const pending = await store.events.pending(flaky.uid, 10);
      assert.deepEqual(
        pending.map((p) => [p.id, p.attempts]),
        [
          [first.id, 1],
          [rows[1]?.id, 0],
        ],
        "it is still the first pending delivery, with its attempts",
      );
      assert.deepEqual(
        await store.subscriptions.status(flaky.uid),
        { pending: 2, failed: 0, retryTime: T0 + 60 * SECOND },
        "status shows the back-off",
      );
      const batch = await store.subscriptions.statuses([flaky.uid, healthy.uid, newChildUid(newRootUid())]);
      assert.deepEqual(
        [...batch.keys()].sort(),
        [flaky.uid, healthy.uid].sort(),
        "statuses answers the subscriptions that exist",
      );
      assert.deepEqual(
        batch.get(flaky.uid),
        { pending: 2, failed: 0, retryTime: T0 + 60 * SECOND },
        "each with its own counts and back-off",
      );
      assert.equal(batch.get(healthy.uid)?.retryTime, 0, "the healthy lane has no back-off");
      assert.deepEqual(
        await store.events.deliveries({ subscriptionUid: flaky.uid, state: "failed", limit: 10 }),
        [],
        "no dead letter",
      );

      assert.deepEqual(await lease(store, "w2", T0 + 20), [healthy.uid], "the backing-off lane is skipped");
      await finish(store, { subscriptionUid: healthy.uid, owner: "w2", now: T0 + 30 });
      assert.deepEqual(
        await lease(store, "w2", T0 + 60 * SECOND - 1),
        [healthy.uid],
        "still skipped before retryTime",
      );
      await finish(store, { subscriptionUid: healthy.uid, owner: "w2", now: T0 + 60 * SECOND - 1 });
      assert.deepEqual(
        (await lease(store, "w2", T0 + 60 * SECOND)).sort(),
        [flaky.uid, healthy.uid].sort(),
        "leasable again at retryTime",
      );

      // A later success clears the back-off and counts.
      await store.events.finish({
        subscriptionUid: flaky.uid,
        owner: "w2",
        delivered: [first.id],
        now: T0 + 61 * SECOND,
      });
      assert.deepEqual(
        await store.subscriptions.status(flaky.uid),
        { pending: 1, failed: 0, retryTime: 0 },
        "delivered: one left, no back-off",
      );
      assert.deepEqual(await pendingSubjects(store, flaky.uid), [`${org}#e2`], "the next event is up");
    });

    it("a dead failure dead-letters the delivery and the lane goes on without backing off", async () => {
      const { store, options } = await fresh();
      const org = newRootUid();
      const s = subRow(org);
      await store.subscriptions.insert(s);
      await store.events.append(eventOf(org, "e1"));
      await store.events.append(eventOf(org, "e2"));
      assert.deepEqual(await lease(store, "w1", T0), [s.uid], "leased");
      const [first, second] = await store.events.pending(s.uid, 10);
      assert.ok(first && second, "two pending");
      await store.events.finish({
        subscriptionUid: s.uid,
        owner: "w1",
        delivered: [],
        // retryTime is ignored when dead.
        failure: {
          deliveryId: first.id,
          attempts: 7,
          status: 410,
          error: "gone",
          dead: true,
          retryTime: T0 + 1e9,
        },
        now: T0 + 5,
      });

      const failed = await store.events.deliveries({ subscriptionUid: s.uid, state: "failed", limit: 10 });
      assert.deepEqual(
        failed.map((r) => ({ ...r, event: r.event.subject })),
        [
          {
            id: first.id,
            uid: streamDeliveryUid(s.uid, first.id),
            subscriptionUid: s.uid,
            state: "failed",
            redeliveryOf: "",
            attempts: 7,
            lastAttemptTime: T0 + 5,
            lastStatus: 410,
            lastError: "gone",
            event: `${org}#e1`,
          },
        ],
        "the dead letter is listed as failed, with its attempt",
      );
      assert.deepEqual(
        (await store.events.pending(s.uid, 10)).map((p) => p.id),
        [second.id],
        "pending goes on with the next delivery",
      );
      assert.deepEqual(
        await store.subscriptions.status(s.uid),
        { pending: 1, failed: 1, retryTime: 0 },
        "status",
      );
      assert.deepEqual(await lease(store, "w2", T0 + 5), [s.uid], "not backing off: leasable at once");

      await store.events.finish({ subscriptionUid: s.uid, owner: "w2", delivered: [second.id], now: T0 + 6 });
      assert.deepEqual(await lease(store, "w3", T0 + 7), [], "only a dead letter left: no work");
      assert.equal(await store.events.prune(), 1, "the delivered event is pruned");
      assert.deepEqual(await storedEventSubjects(options), [`${org}#e1`], "a dead letter keeps its event");
      assert.equal(
        (await store.events.deliveries({ subscriptionUid: s.uid, state: "failed", limit: 10 }))[0]?.event
          .subject,
        `${org}#e1`,
        "and is still listed with it",
      );
      assert.deepEqual(
        await store.subscriptions.status(s.uid),
        { pending: 0, failed: 1, retryTime: 0 },
        "status",
      );
    });

    it("finish moves the cursor past delivered events; prune deletes the events no cursor owes", async () => {
      const { store, options } = await fresh();
      const org = newRootUid();
      const team = newChildUid(org);
      const s1 = subRow(org);
      const s2 = subRow(team);
      await store.subscriptions.insert(s1);
      await store.subscriptions.insert(s2);
      await store.events.append(eventOf(team, "both1"));
      await store.events.append(eventOf(team, "both2"));
      await store.events.append(eventOf(org, "only1"));
      assert.deepEqual((await lease(store, "w", T0)).sort(), [s1.uid, s2.uid].sort(), "both lanes leased");

      const [b1] = await store.events.pending(s1.uid, 10);
      assert.ok(b1 !== undefined, "s1 owes three");
      await finish(store, { subscriptionUid: s1.uid, owner: "w", delivered: [b1.id], now: T0 + 1 });
      assert.deepEqual(
        await pendingSubjects(store, s1.uid),
        [`${team}#both2`, `${org}#only1`],
        "s1 goes on after both1",
      );
      assert.deepEqual(
        await pendingSubjects(store, s2.uid),
        [`${team}#both1`, `${team}#both2`],
        "s2 is untouched",
      );
      assert.equal(await store.events.prune(), 0, "every event is still owed to someone");
      assert.deepEqual(
        await storedEventSubjects(options),
        [`${team}#both1`, `${team}#both2`, `${org}#only1`],
        "nothing pruned",
      );

      const p2 = await store.events.pending(s2.uid, 10);
      await finish(store, {
        subscriptionUid: s2.uid,
        owner: "w",
        delivered: p2.map((p) => p.id),
        now: T0 + 2,
      });
      assert.deepEqual(
        await store.subscriptions.status(s2.uid),
        { pending: 0, failed: 0, retryTime: 0 },
        "s2 done",
      );
      assert.equal(await store.events.prune(), 1, "both1 is pruned");
      assert.deepEqual(
        await storedEventSubjects(options),
        [`${team}#both2`, `${org}#only1`],
        "s1 still owes both2 and only1",
      );
      const p1 = await store.events.pending(s1.uid, 10);
      assert.deepEqual(await lease(store, "w", T0 + 3), [s1.uid], "s1 leased again; s2 owes nothing");
      await finish(store, {
        subscriptionUid: s1.uid,
        owner: "w",
        delivered: p1.map((p) => p.id),
        now: T0 + 3,
      });
      assert.equal(await store.events.prune(), 2, "the rest is pruned");
      assert.deepEqual(await storedEventSubjects(options), [], "every event is pruned");
      assert.equal(await store.events.prune(), 0, "pruning again finds nothing");
    });

    it("a new subscription receives only the events appended after it", async () => {
      const { store } = await fresh();
      const org = newRootUid();
      const early = subRow(org);
      await store.subscriptions.insert(early);
      await store.events.append(eventOf(org, "before"));
      const late = subRow(org);
      await store.subscriptions.insert(late);
      await store.events.append(eventOf(org, "after"));
      assert.deepEqual(await pendingSubjects(store, early.uid), [`${org}#before`, `${org}#after`], "early");
      assert.deepEqual(
        await pendingSubjects(store, late.uid),
        [`${org}#after`],
        "late: only what came after",
      );

      // With the table pruned empty, a new subscription still starts before the next event.
      const p = await store.events.pending(early.uid, 10);
      await lease(store, "w", T0);
      for (const sub of [early, late]) {
        const owed = await store.events.pending(sub.uid, 10);
        await finish(store, {
          subscriptionUid: sub.uid,
          owner: "w",
          delivered: owed.map((o) => o.id),
          now: T0,
        });
      }
      assert.equal(await store.events.prune(), p.length, "all pruned");
      const newest = subRow(org);
      await store.subscriptions.insert(newest);
      await store.events.append(eventOf(org, "next"));
      assert.deepEqual(await pendingSubjects(store, newest.uid), [`${org}#next`], "after an empty table");
    });

    it("prune deletes a backlog longer than one delete statement and keeps what is still owed", async () => {
      const { store, options } = await fresh();
      const org = newRootUid();
      const child = newChildUid(org);
      const parent = subRow(org);
      const below = subRow(child);
      for (const s of [parent, below]) await store.subscriptions.insert(s);
      const many = 2 * PRUNE_CHUNK + 10;
      for (let i = 0; i < many; i++) await store.events.append(eventOf(org, `e${i}`));
      await store.events.append(eventOf(child, "shared"));

      await lease(store, "w", T0);
      const owed = await store.events.pending(parent.uid, many + 10);
      assert.equal(owed.length, many + 1, "the parent owes every event");
      await finish(store, {
        subscriptionUid: parent.uid,
        owner: "w",
        delivered: owed.map((o) => o.id),
        now: T0,
      });
      assert.equal(await store.events.prune(), many, "every event only the parent was owed");
      assert.deepEqual(
        await storedEventSubjects(options),
        [`${child}#shared`],
        "'shared' is still owed below",
      );
      assert.deepEqual(await pendingSubjects(store, below.uid), [`${child}#shared`]);
    });

    it("pruning while lanes finish never deletes an event a cursor still owes", async () => {
      const { store, options } = await fresh();
      const handles = await handlesOf(store, options);
      const org = newRootUid();
      const subs = [subRow(org), subRow(org), subRow(org)];
      for (const s of subs) await store.subscriptions.insert(s);
      const ROUNDS = 10;
      for (let round = 0; round < ROUNDS; round++) {
        await store.events.append(eventOf(org, `r${round}`));
        const now = T0 + round * SECOND;
        assert.equal((await lease(store, "w", now)).length, subs.length, `round ${round}: all lanes leased`);
        const owed = await Promise.all(subs.map((s) => store.events.pending(s.uid, 10)));
        // The first lane finishes while two prunes run; the others still owe the event.
        const [first, ...rest] = subs;
        assert.ok(first, "three subscriptions");
        await Promise.all([
          (handles[0] ?? store).events.finish({
            subscriptionUid: first.uid,
            owner: "w",
            delivered: (owed[0] ?? []).map((p) => p.id),
            now: now + 1,
          }),
          (handles[1 % handles.length] ?? store).events.prune(),
          (handles[2 % handles.length] ?? store).events.prune(),
        ]);
        for (const s of rest) {
          assert.deepEqual(
            await pendingSubjects(store, s.uid),
            [`${org}#r${round}`],
            `round ${round}: still owed`,
          );
        }
        await Promise.all([
          ...rest.map((s, i) =>
            (handles[(i + 1) % handles.length] ?? store).events.finish({
              subscriptionUid: s.uid,
              owner: "w",
              delivered: (owed[i + 1] ?? []).map((p) => p.id),
              now: now + 2,
            }),
          ),
          (handles[0] ?? store).events.prune(),
        ]);
      }
      await store.events.prune();
      assert.deepEqual(await storedEventSubjects(options), [], "no event outlives its last delivery");
    });

    it("subscriptions deleted while other lanes finish the same events still prune them", async () => {
      const { store, options } = await fresh();
      const handles = await handlesOf(store, options);
      const PAIRS = 6;
      for (let round = 0; round < 6; round++) {
        // PAIRS groups with two subscriptions each and one event: one lane delivers it while the
        // other subscription is deleted, all at once.
        const pairs = Array.from({ length: PAIRS }, () => {
          const group = newRootUid();
          return { group, stays: subRow(group), goes: subRow(group) };
        });
        for (const { group, stays, goes } of pairs) {
          await store.subscriptions.insert(stays);
          await store.subscriptions.insert(goes);
          await store.events.append(eventOf(group, `r${round}`));
        }
        const now = T0 + round * SECOND;
        assert.equal((await lease(store, "w", now)).length, 2 * PAIRS, `round ${round}: all lanes leased`);
        const owed = await Promise.all(pairs.map(({ stays }) => store.events.pending(stays.uid, 10)));
        const results = await Promise.all(
          pairs.flatMap(({ stays, goes }, i) => [
            (handles[i % handles.length] ?? store).events.finish({
              subscriptionUid: stays.uid,
              owner: "w",
              delivered: (owed[i] ?? []).map((p) => p.id),
              now: now + 1,
            }),
            (handles[(i + 1) % handles.length] ?? store).subscriptions.delete(goes.uid),
          ]),
        );
        assert.equal(
          results.filter((r) => r === true).length,
          PAIRS,
          `round ${round}: every delete succeeded`,
        );
      }
      await store.events.prune();
      assert.deepEqual(await storedEventSubjects(options), [], "no event outlives its last delivery");
    });

    it("appends racing a delete of one of their subscriptions never fail the change", async () => {
      const { store, options } = await fresh();
      const handles = await handlesOf(store, options);
      for (let round = 0; round < 6; round++) {
        const groups = Array.from({ length: 6 }, () => newRootUid());
        const doomed = groups.map((g) => subRow(g));
        for (const [i, g] of groups.entries()) {
          await store.subscriptions.insert(subRow(g));
          await store.subscriptions.insert(doomed[i] as SubscriptionRow);
        }
        const results = await Promise.allSettled(
          groups.flatMap((g, i) => [
            (handles[i % handles.length] ?? store).events.append(eventOf(g, `a${round}`)),
            (handles[(i + 1) % handles.length] ?? store).subscriptions.delete(
              (doomed[i] as SubscriptionRow).uid,
            ),
          ]),
        );
        const failed = results.filter((r) => r.status === "rejected");
        assert.deepEqual(failed, [], `round ${round}: neither appends nor deletes fail`);
      }
    });

    it("a failure recorded while the subscription is deleted does not deadlock either", async () => {
      const { store, options } = await fresh();
      const handles = await handlesOf(store, options);
      for (let round = 0; round < 6; round++) {
        const subs = Array.from({ length: 6 }, () => subRow(newRootUid()));
        for (const sub of subs) {
          await store.subscriptions.insert(sub);
          await store.events.append(eventOf(sub.groupUid, `f${round}`));
        }
        const now = T0 + round * SECOND;
        await lease(store, "w", now);
        const owed = await Promise.all(subs.map((sub) => store.events.pending(sub.uid, 10)));
        const results = await Promise.allSettled(
          subs.flatMap((sub, i) => [
            (handles[i % handles.length] ?? store).events.finish({
              subscriptionUid: sub.uid,
              owner: "w",
              delivered: [],
              failure: {
                deliveryId: owed[i]?.[0]?.id ?? 0,
                attempts: 1,
                status: 503,
                error: "sink answered HTTP 503",
                dead: false,
                retryTime: now + SECOND,
              },
              now: now + 1,
            }),
            (handles[(i + 1) % handles.length] ?? store).subscriptions.delete(sub.uid),
          ]),
        );
        assert.deepEqual(
          results.filter((r) => r.status === "rejected"),
          [],
          `round ${round}: no deadlock aborts either side`,
        );
      }
      await store.events.prune();
      assert.deepEqual(await storedEventSubjects(options), [], "the deleted subscriptions owe nothing");
    });

    it("finish by an owner that no longer holds the lease does not release it", async () => {
      const { store } = await fresh();
      const org = newRootUid();
      const s = subRow(org);
      await store.subscriptions.insert(s);
      await store.events.append(eventOf(org, "e1"));

      assert.deepEqual(await lease(store, "w1", T0, 10, SECOND), [s.uid], "w1 leases");
      await finish(store, { subscriptionUid: s.uid, owner: "intruder", now: T0 + 10 });
      assert.deepEqual(
        await lease(store, "w3", T0 + 20, 10, SECOND),
        [],
        "a stranger's finish leaves w1's lease",
      );

      // w1's lease runs out, w2 takes the lane, then w1 finishes late.
      assert.deepEqual(
        await lease(store, "w2", T0 + 2 * SECOND, 10, SECOND),
        [s.uid],
        "w2 takes the expired lane",
      );
      await finish(store, { subscriptionUid: s.uid, owner: "w1", now: T0 + 2 * SECOND + 10 });
      assert.deepEqual(
        await lease(store, "w3", T0 + 2 * SECOND + 20, 10, SECOND),
        [],
        "w1's late finish leaves w2's lease",
      );
      const [p] = await store.events.pending(s.uid, 1);
      assert.ok(p !== undefined, "still owed");
      await store.events.finish({
        subscriptionUid: s.uid,
        owner: "w1",
        delivered: [],
        failure: {
          deliveryId: p.id,
          attempts: 1,
          status: 500,
          error: "late",
          dead: false,
          retryTime: T0 + 1e9,
        },
        now: T0 + 2 * SECOND + 30,
      });
      assert.equal(
        (await store.subscriptions.status(s.uid)).retryTime,
        0,
        "a stale owner does not back the lane off",
      );
      await finish(store, {
        subscriptionUid: s.uid,
        owner: "w1",
        delivered: [p.id],
        now: T0 + 2 * SECOND + 35,
      });
      assert.deepEqual(
        (await store.events.pending(s.uid, 1)).map((x) => x.id),
        [p.id],
        "nor moves its cursor (the holder sends the event again)",
      );
      assert.deepEqual(await lease(store, "w3", T0 + 2 * SECOND + 40, 10, SECOND), [], "nor free it");

      await finish(store, { subscriptionUid: s.uid, owner: "w2", now: T0 + 2 * SECOND + 50 });
      assert.deepEqual(
        await lease(store, "w3", T0 + 2 * SECOND + 60, 10, SECOND),
        [s.uid],
        "the holder's finish frees it",
      );
    });

    it("deleting a subscription drops its dead letters and the events nobody else is owed", async () => {
      const { store, options } = await fresh();
      const org = newRootUid();
      const team = newChildUid(org);
      const keep = subRow(org);
      const drop = subRow(team);
      await store.subscriptions.insert(keep);
      await store.subscriptions.insert(drop);
      await store.events.append(eventOf(team, "shared"));
      await store.events.append(eventOf(team, "dead"));
      await store.events.append(eventOf(org, "org-only"));
      await store.events.append(eventOf(team, "mine")); // owed to both; drop never sends it
      assert.deepEqual((await lease(store, "w", T0)).sort(), [drop.uid, keep.uid].sort(), "both leased");
      const [shared, dead] = await store.events.pending(drop.uid, 10);
      assert.ok(shared !== undefined && dead !== undefined, "drop owes 'shared' and 'dead'");
      await store.events.finish({
        subscriptionUid: drop.uid,
        owner: "w",
        delivered: [shared.id],
        failure: { deliveryId: dead.id, attempts: 3, status: 0, error: "refused", dead: true, retryTime: 0 },
        now: T0 + 1,
      });
      await finish(store, {
        subscriptionUid: keep.uid,
        owner: "w",
        delivered: [shared.id, dead.id],
        now: T0 + 1,
      });
      assert.equal(await store.events.prune(), 1, "'shared' is pruned");
      const keepBefore = await store.events.deliveries({ subscriptionUid: keep.uid, limit: 10 });
      assert.deepEqual(
        keepBefore.map((r) => r.event.subject),
        [`${org}#org-only`, `${team}#mine`],
        "keep still owes two",
      );
      assert.equal(await storedDeadLetterCount(options), 1, "drop's dead letter");

      assert.equal(await store.subscriptions.delete(drop.uid), true, "deleted");
      // Deleting keeps the events (the retention sweep prunes them, ADR 0049): prune as it would.
      assert.equal(await store.events.prune(), 1, "the sweep prunes 'dead'");
      assert.deepEqual(
        await store.events.deliveries({ subscriptionUid: drop.uid, limit: 10 }),
        [],
        "its deliveries are gone",
      );
      assert.deepEqual(await store.events.pending(drop.uid, 10), [], "nothing pending");
      assert.deepEqual(
        await store.subscriptions.status(drop.uid),
        { pending: 0, failed: 0, retryTime: 0 },
        "status",
      );
      assert.equal(await storedDeadLetterCount(options), 0, "its dead letter is gone");
      assert.deepEqual(
        await store.events.deliveries({ subscriptionUid: keep.uid, limit: 10 }),
        keepBefore,
        "the other subscription's deliveries are untouched",
      );
      assert.deepEqual(
        await storedEventSubjects(options),
        [`${org}#org-only`, `${team}#mine`],
        "'dead' (only its dead letter held it) is pruned; what keep owes stays",
      );

      assert.equal(await store.subscriptions.delete(keep.uid), true, "the last subscription deleted");
      await store.events.prune();
      assert.deepEqual(await storedEventSubjects(options), [], "no event left");
    });

    it("deliveries filters by state and pages by id with afterId and limit", async () => {
      const { store } = await fresh();
      const org = newRootUid();
      const s = subRow(org);
      const other = subRow(org);
      await store.subscriptions.insert(s);
      await store.subscriptions.insert(other);
      for (let i = 0; i < 5; i++) await store.events.append(eventOf(org, `e${i}`));
      const ids = (await store.events.pending(s.uid, 10)).map((p) => p.id);
      assert.equal(ids.length, 5, "five pending");
      assert.deepEqual(
        ids,
        [...ids].sort((a, b) => a - b),
        "ids ascend with event order",
      );
      const [d0, d1, d2, d3, d4] = ids;
      assert.ok(d0 && d1 && d2 && d3 && d4, "five ids");
      const failure = (deliveryId: number, dead: boolean) => ({
        deliveryId,
        attempts: 2,
        status: 400,
        error: "bad request",
        dead,
        retryTime: dead ? 0 : T0 + SECOND,
      });
      // d0 dead; d1 delivered, d2 dead; d3 failed once (pending, backing off).
      const outcomes = [
        { delivered: [], failure: failure(d0, true) },
        { delivered: [d1], failure: failure(d2, true) },
        { delivered: [], failure: failure(d3, false) },
      ];
      for (const outcome of outcomes) {
        assert.ok(
          (await lease(store, "w", T0)).includes(s.uid),
          "s leased (again at once after a dead letter)",
        );
        await store.events.finish({ subscriptionUid: s.uid, owner: "w", now: T0, ...outcome });
      }
      const list = async (args: { state?: "pending" | "failed"; afterId?: number; limit: number }) =>
        (await store.events.deliveries({ subscriptionUid: s.uid, ...args })).map((r) => r.id);

      assert.deepEqual(await list({ limit: 10 }), [d0, d2, d3, d4], "every delivery by id ascending");
      assert.deepEqual(await list({ state: "failed", limit: 10 }), [d0, d2], "the dead letters");
      assert.deepEqual(await list({ state: "pending", limit: 10 }), [d3, d4], "the pending ones");
      assert.deepEqual(await list({ limit: 3 }), [d0, d2, d3], "limit across both kinds");
      assert.deepEqual(await list({ afterId: d0, limit: 2 }), [d2, d3], "afterId then limit");
      assert.deepEqual(await list({ afterId: d4, limit: 10 }), [], "after the last");
      assert.deepEqual(
        await list({ state: "pending", afterId: d3, limit: 1 }),
        [d4],
        "state, afterId and limit",
      );
      assert.deepEqual(
        await list({ state: "failed", afterId: d0, limit: 10 }),
        [d2],
        "failed after the first",
      );

      const attemptsOf = async (afterId?: number) =>
        (await store.events.deliveries({ subscriptionUid: s.uid, state: "pending", afterId, limit: 1 })).map(
          (r) => [r.id, r.attempts, r.lastStatus, r.lastError, r.lastAttemptTime],
        );
      assert.deepEqual(
        await attemptsOf(),
        [[d3, 2, 400, "bad request", T0]],
        "the first pending carries the attempts",
      );
      assert.deepEqual(
        await attemptsOf(d2),
        [[d3, 2, 400, "bad request", T0]],
        "also on a page starting at it",
      );
      assert.deepEqual(await attemptsOf(d3), [[d4, 0, 0, "", 0]], "the next one has none");

      const theirs = await store.events.deliveries({ subscriptionUid: other.uid, limit: 10 });
      assert.deepEqual(
        theirs.map((r) => [r.id, r.subscriptionUid, r.state, r.attempts]),
        ids.map((id) => [id, other.uid, "pending", 0]),
        "the other subscription still owes all five, untouched by s's outcomes",
      );
      assert.deepEqual(
        await store.subscriptions.status(s.uid),
        { pending: 2, failed: 2, retryTime: T0 + SECOND },
        "status counts",
      );
    });
  });
}
