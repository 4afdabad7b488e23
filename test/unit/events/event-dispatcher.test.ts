import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import BetterSqlite3 from "better-sqlite3";
import { systemClock } from "../../../src/core/clock.js";
import { newChildUid, newRootUid } from "../../../src/core/uidp.js";
import { type EventDispatcher, startEventDispatcher } from "../../../src/events/event-dispatcher.js";
import { localHostIdentity } from "../../../src/events/local-process.js";
import { createSinkAddressPolicy } from "../../../src/events/sink-address-policy.js";
import { systemSinkResolver } from "../../../src/events/sink-host.js";
import { createWebhookSender } from "../../../src/events/webhook-sender.js";
import { newRedeliveryUid } from "../../../src/storage/delivery-uid.js";
import type { EventOutboxStore } from "../../../src/storage/event-store.js";
import { openStore } from "../../../src/storage/sql/open-store.js";
import type { Store } from "../../../src/storage/store.js";
import { startWebhookReceiver, type WebhookReceiver } from "../../support/webhook-receiver.js";

/** Long enough that a round it delays is told apart from one started at once, even on a busy machine. */
const POKE_INTERVAL_MS = 1500;

describe("event dispatcher lease rounds", () => {
  let dir: string;
  let store: Store;
  let receiver: WebhookReceiver;
  // The receiver listens on loopback, which senders refuse unless allowed.
  const sender = createWebhookSender("wharf-test", {
    policy: createSinkAddressPolicy({ allow: [], allowLoopback: true }),
    resolve: systemSinkResolver,
  });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "wharf-dispatcher-"));
    store = await openStore({ sqlitePath: join(dir, "wharf.db") });
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    sender.close();
    await receiver.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A subscription of a new organization to the receiver, and `append` for its events. */
  async function subscribed(): Promise<{ path: string; append: (n: number) => Promise<void> }> {
    const org = newRootUid();
    const path = `/${randomUUID()}`;
    await store.subscriptions.insert({
      uid: newChildUid(org),
      groupUid: org,
      sink: receiver.url(path),
      createTime: Date.now(),
    });
    const append = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await store.events.append({
          id: randomUUID(),
          type: "dev.wharf.api.registry.repo.created.v1",
          source: "//wharf.test/api",
          subject: `${org}#${i}`,
          groupUid: org,
          time: Date.now(),
          extensions: {},
          data: "{}",
        });
      }
    };
    return { path, append };
  }

  /**
   * A dispatcher over the store whose lease rounds and prunes are counted; delivered events are
   * kept `retentionMs` (default 0: pruned once delivered).
   */
  function dispatcher(
    batchSize: number,
    pruneIntervalMs?: number,
    retentionMs = 0,
  ): { rounds: () => number; prunes: () => number; dispatcher: EventDispatcher } {
    let rounds = 0;
    let prunes = 0;
    const events: EventOutboxStore = {
      ...store.events,
      leaseLanes(args) {
        rounds++;
        return store.events.leaseLanes(args);
      },
      prune(args) {
        prunes++;
        return store.events.prune(args);
      },
    };
    return {
      rounds: () => rounds,
      prunes: () => prunes,
      dispatcher: startEventDispatcher({
        events,
        sign: async () => "token",
        send: sender.send,
        clock: systemClock,
        logger: () => {},
        options: {
          batchSize,
          pokeIntervalMs: POKE_INTERVAL_MS,
          pollMs: 60_000,
          pruneIntervalMs,
          retentionMs,
        },
      }),
    };
  }

  /** Rows left in the outbox's events table. */
  function storedEvents(): number {
    const sqlite = new BetterSqlite3(join(dir, "wharf.db"), { readonly: true });
    try {
      return Number((sqlite.prepare("select count(*) as n from events").get() as { n: number }).n);
    } finally {
      sqlite.close();
    }
  }

  const deliveredTo = (path: string) => receiver.accepted().filter((r) => r.path === path).length;

  it("a lane that caught up waits for the poke interval instead of starting another round at once", async () => {
    const { path, append } = await subscribed();
    await append(1);
    const { rounds, dispatcher: d } = dispatcher(10);
    try {
      await receiver.waitFor(() => deliveredTo(path) === 1, 10_000);
      const roundsWhenDelivered = rounds();
      // Before, a lane that made progress started a round at once: a lease transaction per event or two.
      await sleep(POKE_INTERVAL_MS / 3);
      assert.equal(rounds(), roundsWhenDelivered, "no round right after the lane caught up");
      await append(2);
      d.poke();
      await receiver.waitFor(() => deliveredTo(path) === 3, 10_000);
      assert.equal(deliveredTo(path), 3, "the next events still go out after the interval");
    } finally {
      await d.close();
    }
  });

  it("delivered events are pruned by one prune per interval, not one per lane", async () => {
    const lanes = await Promise.all([subscribed(), subscribed(), subscribed()]);
    for (const lane of lanes) await lane.append(3);
    assert.ok(storedEvents() >= 9, "the events wait in the outbox");
    const { prunes, dispatcher: d } = dispatcher(2, 400);
    try {
      await receiver.waitFor(() => lanes.every((lane) => deliveredTo(lane.path) === 3), 10_000);
      const deadline = performance.now() + 5_000;
      while (storedEvents() > 0 && performance.now() < deadline) await sleep(50);
      assert.equal(storedEvents(), 0, "every delivered event is pruned");
      // Six lane runs moved a cursor within ~one interval: at most a prune per interval started.
      assert.ok(prunes() >= 1 && prunes() <= 3, `prunes: ${prunes()}`);
    } finally {
      await d.close();
    }
  });

  it("a dispatcher whose heartbeat is not recorded aborts its sends and leases nothing until it is again", async () => {
    const { path, append } = await subscribed();
    await append(1);
    receiver.respondWith("hang");
    let failing = false;
    let failedBeats = 0;
    let leasedWhileFailing = 0;
    const lines: string[] = [];
    const outcomes: Parameters<EventOutboxStore["finish"]>[0][] = [];
    const events: EventOutboxStore = {
      ...store.events,
      heartbeat(beat) {
        if (!failing) return store.events.heartbeat(beat);
        failedBeats++;
        return Promise.reject(new Error("database unreachable"));
      },
      async leaseLanes(args) {
        const lanes = await store.events.leaseLanes(args);
        if (failing) leasedWhileFailing += lanes.length;
        return lanes;
      },
      finish(outcome) {
        outcomes.push(outcome);
        return store.events.finish(outcome);
      },
    };
    const d = startEventDispatcher({
      events,
      sign: async () => "token",
      send: sender.send,
      clock: systemClock,
      logger: (line) => lines.push((line as { msg: string }).msg),
      options: { heartbeatMs: 200, ownerStaleMs: 1_000, timeoutMs: 20_000, pollMs: 100 },
    });
    const waitUntil = async (what: string, condition: () => boolean) => {
      const deadline = performance.now() + 10_000;
      while (!condition()) {
        assert.ok(performance.now() < deadline, `timed out waiting until ${what}`);
        await sleep(20);
      }
    };
    try {
      const sent = () => receiver.received.filter((r) => r.path === path).length;
      await waitUntil("the delivery is in flight", () => sent() === 1);
      failing = true;
      const lostAt = performance.now();
      await waitUntil("the send is given up", () => outcomes.length === 1);
      const tookMs = performance.now() - lostAt;
      assert.ok(
        tookMs < 5_000,
        `aborted ${Math.round(tookMs)} ms after heartbeats stopped, not at the 20 s limit`,
      );
      assert.deepEqual(
        { delivered: outcomes[0]?.delivered, failure: outcomes[0]?.failure },
        { delivered: [], failure: undefined },
        "not a failure of the sink: nothing recorded against it",
      );
      assert.ok(
        lines.some((l) => l.startsWith("event dispatcher heartbeat not recorded in time")),
        `logged: ${JSON.stringify(lines)}`,
      );
      receiver.respondWith(200);
      await append(1);
      d.poke();
      // Five more beats (a second): rounds poked and polled meanwhile must lease nothing.
      const beatsSoFar = failedBeats;
      await waitUntil("five more heartbeats fail", () => failedBeats >= beatsSoFar + 5);
      assert.equal(leasedWhileFailing, 0, "no lane leased while its heartbeat is not recorded");
      assert.equal(deliveredTo(path), 0, "nothing sent meanwhile");
      failing = false;
      await receiver.waitFor(() => deliveredTo(path) === 2, 10_000);
    } finally {
      receiver.respondWith(200);
      await d.close();
    }
  });

  it("a lane held by a dead process of this host is taken at the first heartbeat; a live one's is not", async () => {
    // A PID that existed and is gone (a child that exited), and one that is alive (this one's parent).
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    const deadPid = child.pid ?? 0;
    await new Promise((resolve) => child.once("exit", resolve));
    const { host } = localHostIdentity();
    const now = Date.now();
    const heldBy = async (owner: string, pid: number) => {
      const lane = await subscribed();
      await lane.append(1);
      await store.events.heartbeat({ owner, now, host, pid, startTime: now });
      // Leased for a minute, heart-beaten just now: only knowing the process is gone frees it early.
      await store.events.leaseLanes({ owner, now, leaseMs: 60_000, limit: 100 });
      return lane;
    };
    const dead = await heldBy(`dead-${randomUUID()}`, deadPid);
    const live = await heldBy(`live-${randomUUID()}`, process.ppid);
    const logged: object[] = [];
    const started = performance.now();
    const d = startEventDispatcher({
      events: store.events,
      sign: async () => "token",
      send: sender.send,
      clock: systemClock,
      logger: (line) => void logged.push(line),
      options: { pollMs: 100 },
    });
    try {
      await receiver.waitFor(() => deliveredTo(dead.path) === 1, 2500);
      assert.ok(performance.now() - started < 2500, "before the 3 s a heartbeat takes to go stale");
      assert.ok(
        logged.some((l) => JSON.stringify(l).includes("found a dead dispatcher on this host")),
        "logged why",
      );
      await sleep(500);
      assert.equal(deliveredTo(live.path), 0, "the live process keeps its lane");
    } finally {
      await d.close();
    }
  });

  it("a lane that sent a full batch goes on at once", async () => {
    const { path, append } = await subscribed();
    await append(7);
    const { dispatcher: d } = dispatcher(2);
    try {
      const started = performance.now();
      await receiver.waitFor(() => deliveredTo(path) === 7, 10_000);
      // Four batches of at most two: were each to wait for the interval, this would take 4.5 s.
      assert.ok(
        performance.now() - started < POKE_INTERVAL_MS,
        `seven events in batches of two without waiting for the interval (took ${Math.round(performance.now() - started)} ms)`,
      );
    } finally {
      await d.close();
    }
  });

  it("sends a redelivery before the stream with the same ce-id, and gives it up after the attempts", async () => {
    const { path, append } = await subscribed();
    await append(1);
    const { dispatcher: d } = dispatcher(10, undefined, 60_000);
    const sub = (
      await store.subscriptions.list({}, { order: { field: "uid", desc: false }, limit: 1000, skip: 0 })
    ).rows.find((r) => r.sink === receiver.url(path));
    assert.ok(sub, "the subscription");
    try {
      await receiver.waitFor(() => deliveredTo(path) === 1, 10_000);
      const first = receiver.accepted().find((r) => r.path === path);
      let delivered: Awaited<ReturnType<typeof store.events.deliveries>> = [];
      while (delivered.length === 0) {
        delivered = await store.events.deliveries({ subscriptionUid: sub.uid, state: "delivered", limit: 1 });
        await sleep(10);
      }
      const [original] = delivered;
      assert.ok(original, "delivered");
      const uid = newRedeliveryUid(sub.uid);
      const queued = await store.events.requeue({
        subscriptionUid: sub.uid,
        deliveries: [{ uid, eventSeq: original.id, redeliveryOf: original.uid }],
        now: Date.now(),
      });
      assert.equal(queued.length, 1, "the delivered event is kept (the retention), so it is requeued");
      await append(1);
      d.poke();
      await receiver.waitFor(() => deliveredTo(path) === 3, 10_000);
      const ids = receiver
        .accepted()
        .filter((r) => r.path === path)
        .map((r) => r.headers["ce-id"]);
      assert.equal(ids[1], first?.headers["ce-id"], "the redelivery first, with the original ce-id");
      assert.notEqual(ids[2], ids[1], "then the stream's next event");
      let sent = await store.events.delivery(uid);
      while (sent?.state === "pending") {
        await sleep(10);
        sent = await store.events.delivery(uid);
      }
      assert.deepEqual([sent?.state, sent?.attempts, sent?.lastStatus], ["delivered", 1, 200], "recorded");
    } finally {
      await d.close();
    }

    // A failing sink: the redelivery is retried, then given up on (a dead letter of its own).
    const failing = startEventDispatcher({
      events: store.events,
      sign: async () => "token",
      send: async () => ({ ok: false, status: 503, error: "busy" }),
      clock: systemClock,
      logger: () => {},
      options: { maxAttempts: 2, backoffBaseMs: 10, backoffMaxMs: 20, pollMs: 20, pokeIntervalMs: 10 },
    });
    try {
      const [original] = await store.events.deliveries({
        subscriptionUid: sub.uid,
        state: "delivered",
        limit: 1,
      });
      assert.ok(original, "delivered");
      const uid = newRedeliveryUid(sub.uid);
      await store.events.requeue({
        subscriptionUid: sub.uid,
        deliveries: [{ uid, eventSeq: original.id, redeliveryOf: original.uid }],
        now: Date.now(),
      });
      failing.poke();
      const deadline = Date.now() + 10_000;
      let row = await store.events.delivery(uid);
      while (row?.state !== "failed") {
        assert.ok(Date.now() < deadline, "given up on");
        await sleep(10);
        row = await store.events.delivery(uid);
      }
      assert.deepEqual(
        [row.attempts, row.lastStatus, row.lastError],
        [2, 503, "busy"],
        "both attempts recorded",
      );
      assert.deepEqual(
        await store.events.deadLetters(sub.uid),
        [{ uid, eventSeq: original.id }],
        "a dead letter",
      );
    } finally {
      await failing.close();
    }
  });
});
