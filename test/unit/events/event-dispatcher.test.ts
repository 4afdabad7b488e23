import assert from "node:assert/strict";
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
import { createSinkAddressPolicy } from "../../../src/events/sink-address-policy.js";
import { systemSinkResolver } from "../../../src/events/sink-host.js";
import { createWebhookSender } from "../../../src/events/webhook-sender.js";
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

  /** A dispatcher over the store whose lease rounds and prunes are counted. */
  function dispatcher(
    batchSize: number,
    pruneIntervalMs?: number,
  ): { rounds: () => number; prunes: () => number; dispatcher: EventDispatcher } {
    let rounds = 0;
    let prunes = 0;
    const events: EventOutboxStore = {
      ...store.events,
      leaseLanes(args) {
        rounds++;
        return store.events.leaseLanes(args);
      },
      prune() {
        prunes++;
        return store.events.prune();
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
        options: { batchSize, pokeIntervalMs: POKE_INTERVAL_MS, pollMs: 60_000, pruneIntervalMs },
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
});
