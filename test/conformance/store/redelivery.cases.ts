import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe, it } from "node:test";
import { newChildUid, newRootUid } from "../../../src/core/uidp.js";
import { newRedeliveryUid, streamDeliveryUid } from "../../../src/storage/delivery-uid.js";
import type { EventToAppend, SubscriptionRow } from "../../../src/storage/event-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { T0 } from "./fixtures.js";

const SECOND = 1000;

function subRow(groupUid: string): SubscriptionRow {
  const uid = newChildUid(groupUid);
  return { uid, groupUid, sink: `https://hooks.example/${uid.slice(-16)}`, createTime: T0 };
}

/** An event of `groupUid` at `time` named `name` (in its subject). */
function eventOf(groupUid: string, name: string, time: number): EventToAppend {
  return {
    id: randomUUID(),
    type: "dev.wharf.api.registry.repo.created.v1",
    source: "//wharf.test/api",
    subject: `${groupUid}#${name}`,
    groupUid,
    time,
    extensions: { bodytype: "wharf.v1.Repo" },
    data: JSON.stringify({ actor: "alice", body: { name } }),
  };
}

/** Leases every lane with work for `owner` at `now`. */
async function lease(store: Store, owner: string, now: number): Promise<string[]> {
  const lanes = await store.events.leaseLanes({ owner, now, leaseMs: 10 * SECOND, limit: 100 });
  return lanes.map((l) => l.subscriptionUid);
}

/** Delivers everything `sub` owes now, as a dispatcher lane would (redeliveries with status 200). */
async function deliverAll(store: Store, sub: string, now: number): Promise<void> {
  assert.ok((await lease(store, "w", now)).includes(sub), "the lane is leased");
  const batch = await store.events.pending(sub, 100);
  await store.events.finish({
    subscriptionUid: sub,
    owner: "w",
    delivered: batch.filter((p) => p.redelivery === undefined).map((p) => p.id),
    redelivered: batch.flatMap((p) =>
      p.redelivery === undefined ? [] : [{ uid: p.redelivery, status: 200 }],
    ),
    now,
  });
}

/**
 * Webhook redelivery in the outbox (ADR 0049): delivery uids, delivered deliveries kept while
 * their events are, redeliveries sent before the stream with their own attempts and dead letters,
 * requeued dead letters, the retention prune, and what a replay can reach.
 */
export function redeliveryCases(db: TestDatabase): void {
  const fresh = async () => db.open(await db.freshOptions());

  describe("events: redelivery", () => {
    it("delivered stream deliveries are listed by uid; a redelivery of one goes out first with the same event", async () => {
      const store = await fresh();
      const org = newRootUid();
      const s = subRow(org);
      await store.subscriptions.insert(s);
      await store.events.append(eventOf(org, "e1", T0 + 1));
      await store.events.append(eventOf(org, "e2", T0 + 2));
      const [p1, p2] = await store.events.pending(s.uid, 10);
      assert.ok(p1 && p2, "two pending");
      const uid1 = streamDeliveryUid(s.uid, p1.id);
      assert.equal((await store.events.delivery(uid1))?.state, "pending", "pending before delivery");
      await deliverAll(store, s.uid, T0 + SECOND);

      const delivered = await store.events.deliveries({
        subscriptionUid: s.uid,
        state: "delivered",
        limit: 10,
      });
      assert.deepEqual(
        delivered.map((d) => [d.uid, d.state, d.event.id]),
        [
          [uid1, "delivered", p1.event.id],
          [streamDeliveryUid(s.uid, p2.id), "delivered", p2.event.id],
        ],
        "both delivered, named by subscription and event seq",
      );
      assert.deepEqual(
        await store.events.deliveries({ subscriptionUid: s.uid, limit: 10 }),
        [],
        "none pending or failed",
      );
      assert.equal((await store.events.delivery(uid1))?.state, "delivered", "looked up by uid");

      await store.events.append(eventOf(org, "e3", T0 + 3));
      const again = newRedeliveryUid(s.uid);
      const written = await store.events.requeue({
        subscriptionUid: s.uid,
        deliveries: [{ uid: again, eventSeq: p1.id, redeliveryOf: uid1 }],
        now: T0 + 2 * SECOND,
      });
      assert.deepEqual(
        written.map((w) => [w.uid, w.state, w.redeliveryOf, w.event.id, w.attempts]),
        [[again, "pending", uid1, p1.event.id, 0]],
        "the redelivery, pending, of the same event",
      );
      assert.equal((await store.subscriptions.status(s.uid)).pending, 2, "the redelivery and e3 are owed");
      assert.equal((await store.subscriptions.backlog(100)).pending, 2, "the backlog counts both");
      const batch = await store.events.pending(s.uid, 10);
      assert.deepEqual(
        batch.map((p) => [p.event.subject, p.redelivery]),
        [
          [`${org}#e1`, again],
          [`${org}#e3`, undefined],
        ],
        "the redelivery before the stream",
      );
      assert.deepEqual(
        (await store.events.pending(s.uid, 1)).map((p) => p.redelivery),
        [again],
        "the limit counts redeliveries",
      );
      await deliverAll(store, s.uid, T0 + 3 * SECOND);
      const sent = await store.events.delivery(again);
      assert.deepEqual(
        sent && [sent.state, sent.attempts, sent.lastStatus, sent.lastAttemptTime, sent.event.id],
        ["delivered", 1, 200, T0 + 3 * SECOND, p1.event.id],
        "the redelivery was delivered once, with its own attempt",
      );
      assert.deepEqual(
        (await store.events.redeliveries({ subscriptionUid: s.uid, state: "delivered", limit: 10 })).map(
          (r) => r.uid,
        ),
        [again],
        "listed among the delivered redeliveries",
      );
      assert.equal(
        await store.events.deliveredCount(s.uid),
        4,
        "counted: e1, e2 and e3 of the stream, and the redelivery of e1",
      );
      assert.equal(await store.events.deliveredCount(newChildUid(org)), 0, "no subscription: none");
      assert.deepEqual(
        await store.subscriptions.status(s.uid),
        { pending: 0, failed: 0, retryTime: 0 },
        "done",
      );
    });

    it("a lane with only a pending redelivery is leased; a failure backs it off; a dead one becomes a dead letter", async () => {
      const store = await fresh();
      const org = newRootUid();
      const s = subRow(org);
      await store.subscriptions.insert(s);
      await store.events.append(eventOf(org, "e1", T0 + 1));
      await deliverAll(store, s.uid, T0 + SECOND);
      assert.deepEqual(await lease(store, "w", T0 + 2 * SECOND), [], "nothing owed");
      const [d1] = await store.events.deliveries({ subscriptionUid: s.uid, state: "delivered", limit: 1 });
      assert.ok(d1, "delivered");
      const again = newRedeliveryUid(s.uid);
      await store.events.requeue({
        subscriptionUid: s.uid,
        deliveries: [{ uid: again, eventSeq: d1.id, redeliveryOf: d1.uid }],
        now: T0 + 2 * SECOND,
      });
      assert.deepEqual(await lease(store, "w", T0 + 3 * SECOND), [s.uid], "leased for the redelivery alone");
      const failure = { deliveryId: d1.id, redelivery: again, attempts: 1, status: 503, error: "busy" };
      await store.events.finish({
        subscriptionUid: s.uid,
        owner: "w",
        delivered: [],
        failure: { ...failure, dead: false, retryTime: T0 + 10 * SECOND },
        now: T0 + 3 * SECOND,
      });
      const backingOff = await store.events.delivery(again);
      assert.deepEqual(
        backingOff && [backingOff.state, backingOff.attempts, backingOff.lastStatus, backingOff.lastError],
        ["pending", 1, 503, "busy"],
        "still pending, with its failed attempt",
      );
      assert.deepEqual(await lease(store, "w", T0 + 5 * SECOND), [], "backing off");
      assert.deepEqual(await lease(store, "w", T0 + 10 * SECOND), [s.uid], "leased again after the back-off");
      assert.equal((await store.events.pending(s.uid, 10))[0]?.attempts, 1, "the attempts carry over");
      await store.events.finish({
        subscriptionUid: s.uid,
        owner: "w",
        delivered: [],
        failure: { ...failure, attempts: 2, dead: true, retryTime: 0 },
        now: T0 + 10 * SECOND,
      });
      assert.equal((await store.events.delivery(again))?.state, "failed", "given up on");
      assert.deepEqual(
        (await store.events.redeliveries({ subscriptionUid: s.uid, limit: 10 })).map((r) => [r.uid, r.state]),
        [[again, "failed"]],
        "a dead letter among the redeliveries",
      );
      assert.deepEqual(
        await store.subscriptions.status(s.uid),
        { pending: 0, failed: 1, retryTime: 0 },
        "status",
      );
      assert.equal((await store.subscriptions.backlog(100)).deadLetters, 1, "the backlog counts it");
      assert.deepEqual(
        await store.events.deadLetters(s.uid),
        [{ uid: again, eventSeq: d1.id }],
        "redrive would send it",
      );
      assert.equal((await store.events.delivery(d1.uid))?.state, "delivered", "the original stays delivered");
    });

    it("a requeued dead letter stops being one, in lists, counts and redrives, but stays failed by uid", async () => {
      const store = await fresh();
      const org = newRootUid();
      const s = subRow(org);
      await store.subscriptions.insert(s);
      await store.events.append(eventOf(org, "dead", T0 + 1));
      await store.events.append(eventOf(org, "ok", T0 + 2));
      assert.deepEqual(await lease(store, "w", T0), [s.uid], "leased");
      const [dead] = await store.events.pending(s.uid, 10);
      assert.ok(dead, "pending");
      await store.events.finish({
        subscriptionUid: s.uid,
        owner: "w",
        delivered: [],
        failure: { deliveryId: dead.id, attempts: 3, status: 500, error: "boom", dead: true, retryTime: 0 },
        now: T0,
      });
      await deliverAll(store, s.uid, T0 + SECOND);
      const deadUid = streamDeliveryUid(s.uid, dead.id);
      assert.deepEqual(
        await store.events.deadLetters(s.uid),
        [{ uid: deadUid, eventSeq: dead.id }],
        "one dead letter",
      );
      assert.deepEqual(
        (await store.events.deliveries({ subscriptionUid: s.uid, state: "delivered", limit: 10 })).map(
          (d) => d.event.subject,
        ),
        [`${org}#ok`],
        "a dead letter is not delivered",
      );
      const again = newRedeliveryUid(s.uid);
      await store.events.requeue({
        subscriptionUid: s.uid,
        deliveries: [{ uid: again, eventSeq: dead.id, redeliveryOf: deadUid }],
        now: T0 + 2 * SECOND,
      });
      assert.deepEqual(await store.events.deadLetters(s.uid), [], "no dead letter to redrive");
      assert.deepEqual(
        await store.events.deliveries({ subscriptionUid: s.uid, state: "failed", limit: 10 }),
        [],
        "not listed as failed",
      );
      assert.deepEqual(
        await store.subscriptions.status(s.uid),
        { pending: 1, failed: 0, retryTime: 0 },
        "status",
      );
      const byUid = await store.events.delivery(deadUid);
      assert.deepEqual(
        byUid && [byUid.state, byUid.attempts, byUid.lastError],
        ["failed", 3, "boom"],
        "by uid",
      );
      assert.equal(
        (await store.subscriptions.backlog(100)).deadLetters,
        0,
        "the backlog counts no dead letter",
      );
    });

    it("retention: prune keeps recent events, drops old ones with their delivered redeliveries, and keeps what is still needed", async () => {
      const store = await fresh();
      const org = newRootUid();
      const s = subRow(org);
      await store.subscriptions.insert(s);
      for (let i = 0; i < 3; i++) await store.events.append(eventOf(org, `old${i}`, T0 + i));
      await store.events.append(eventOf(org, "new", T0 + 100 * SECOND));
      await deliverAll(store, s.uid, T0 + 200 * SECOND);
      const delivered = await store.events.deliveries({
        subscriptionUid: s.uid,
        state: "delivered",
        limit: 10,
      });
      assert.equal(delivered.length, 4, "four delivered");
      const [old0, old1] = delivered;
      assert.ok(old0 && old1, "old ones");
      const sentAgain = newRedeliveryUid(s.uid);
      const stillOwed = newRedeliveryUid(s.uid);
      await store.events.requeue({
        subscriptionUid: s.uid,
        deliveries: [{ uid: sentAgain, eventSeq: old0.id, redeliveryOf: old0.uid }],
        now: T0 + 200 * SECOND,
      });
      await deliverAll(store, s.uid, T0 + 201 * SECOND);
      await store.events.requeue({
        subscriptionUid: s.uid,
        deliveries: [{ uid: stillOwed, eventSeq: old1.id, redeliveryOf: old1.uid }],
        now: T0 + 202 * SECOND,
      });

      assert.equal(await store.events.prune({ before: T0 }), 0, "nothing is older than the retention");
      assert.equal(
        await store.events.prune({ before: T0 + 50 * SECOND }),
        2,
        "old0 and old2 go; old1 is owed again",
      );
      assert.deepEqual(
        (await store.events.deliveries({ subscriptionUid: s.uid, state: "delivered", limit: 10 })).map(
          (d) => d.event.subject,
        ),
        [`${org}#old1`, `${org}#new`],
        "delivered ones are listed while their events are kept",
      );
      assert.equal(await store.events.delivery(sentAgain), undefined, "a pruned event's redelivery is gone");
      assert.equal(
        (await store.events.delivery(stillOwed))?.state,
        "pending",
        "a pending redelivery holds its event",
      );
      assert.equal(await store.events.delivery(old0.uid), undefined, "a pruned event's delivery is gone");
      const none = await store.events.requeue({
        subscriptionUid: s.uid,
        deliveries: [{ uid: newRedeliveryUid(s.uid), eventSeq: old0.id, redeliveryOf: old0.uid }],
        now: T0 + 300 * SECOND,
      });
      assert.deepEqual(none, [], "a pruned event is not requeued");
    });

    it("replayable: kept events of the subtree since a time, also from before the subscription, never what it is owed", async () => {
      const store = await fresh();
      const org = newRootUid();
      const team = newChildUid(org);
      const other = newRootUid();
      const early = subRow(org);
      await store.subscriptions.insert(early);
      await store.subscriptions.insert(subRow(other));
      await store.events.append(eventOf(org, "a", T0 + 1));
      await store.events.append(eventOf(team, "b", T0 + 2));
      await store.events.append(eventOf(other, "x", T0 + 3));
      const late = subRow(org);
      await store.subscriptions.insert(late);
      await store.events.append(eventOf(org, "c", T0 + 4));

      const subjects = async (sub: string, since: number) => {
        const seqs = await store.events.replayable({ subscriptionUid: sub, since });
        const rows = await store.events.deliveries({
          subscriptionUid: early.uid,
          state: "delivered",
          limit: 10,
        });
        const subjectOf = new Map(rows.map((r) => [r.id, r.event.subject]));
        return seqs.map((r) => [subjectOf.get(r.seq) ?? r.seq, r.streamed]);
      };
      await deliverAll(store, early.uid, T0 + SECOND);
      assert.deepEqual(
        await subjects(late.uid, T0),
        [
          [`${org}#a`, false],
          [`${team}#b`, false],
        ],
        "events from before it existed, of its subtree only; not c, which it is owed",
      );
      assert.deepEqual(await subjects(late.uid, T0 + 2), [[`${team}#b`, false]], "since is inclusive");
      assert.deepEqual(
        await subjects(early.uid, T0),
        [
          [`${org}#a`, true],
          [`${team}#b`, true],
          [`${org}#c`, true],
        ],
        "what it was sent",
      );
      const [a] = await store.events.replayable({ subscriptionUid: early.uid, since: T0 });
      assert.ok(a, "a");
      await store.events.requeue({
        subscriptionUid: early.uid,
        deliveries: [{ uid: newRedeliveryUid(early.uid), eventSeq: a.seq, redeliveryOf: "" }],
        now: T0 + 2 * SECOND,
      });
      assert.equal(
        (await store.events.replayable({ subscriptionUid: early.uid, since: T0 })).length,
        2,
        "an event with a pending redelivery is not queued twice",
      );
    });

    it("delivery() answers undefined for what is not a delivery of the subscription", async () => {
      const store = await fresh();
      const org = newRootUid();
      const s = subRow(org);
      const elsewhere = subRow(newRootUid());
      await store.subscriptions.insert(s);
      await store.subscriptions.insert(elsewhere);
      await store.events.append(eventOf(elsewhere.groupUid, "theirs", T0 + 1));
      const [theirs] = await store.events.pending(elsewhere.uid, 1);
      assert.ok(theirs, "an event of another organization");
      assert.equal(
        await store.events.delivery(streamDeliveryUid(s.uid, theirs.id)),
        undefined,
        "not in its subtree",
      );
      assert.equal(
        await store.events.delivery(streamDeliveryUid(s.uid, 999_999)),
        undefined,
        "no such event",
      );
      assert.equal(await store.events.delivery(newRedeliveryUid(s.uid)), undefined, "no such redelivery");
      assert.equal(await store.events.delivery(`${s.uid}/zz`), undefined, "malformed");
      assert.equal(
        await store.events.delivery(streamDeliveryUid(newChildUid(org), theirs.id)),
        undefined,
        "no such subscription",
      );
    });

    it("deleting a subscription deletes its redeliveries and keeps the events for the retention", async () => {
      const store = await fresh();
      const org = newRootUid();
      const s = subRow(org);
      await store.subscriptions.insert(s);
      await store.events.append(eventOf(org, "e", T0 + 1));
      await deliverAll(store, s.uid, T0 + SECOND);
      const [d] = await store.events.deliveries({ subscriptionUid: s.uid, state: "delivered", limit: 1 });
      assert.ok(d, "delivered");
      const again = newRedeliveryUid(s.uid);
      await store.events.requeue({
        subscriptionUid: s.uid,
        deliveries: [{ uid: again, eventSeq: d.id, redeliveryOf: d.uid }],
        now: T0 + SECOND,
      });
      assert.equal(await store.subscriptions.delete(s.uid), true, "deleted");
      assert.equal(await store.events.delivery(again), undefined, "its redelivery is gone");
      assert.equal(await store.events.prune({ before: T0 }), 0, "the event is kept within the retention");
      assert.equal(await store.events.prune({ before: T0 + 10 * SECOND }), 1, "and pruned after it");
    });
  });
}
