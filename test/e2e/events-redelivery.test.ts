import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { createWebhookVerifier } from "wharf/webhook-verifier";
import * as subs from "../../src/gen/platform/events/v2/subscriptions_pb.js";
import { detail, expectError, expectJson } from "../support/api-assertions.js";
import { grpcCall } from "../support/grpc-call.js";
import { registeredPerson } from "../support/registered-person.js";
import {
  type ReceivedDelivery,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// Webhook redelivery (ADR 0049) against a real server and real webhook receivers: `:redeliver`,
// `:redrive` and `:replay` send the same CloudEvent (same `ce-id`) again, at least once.

const SERVICE = "/platform.events.v2.SubscriptionsService";
/** Fast retries and two attempts, so dead letters happen in milliseconds. */
const EVENTS = { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50, maxAttempts: 2 };

interface DeliveryJson {
  uid: string;
  state: string;
  attempts?: string;
  eventId: string;
  eventType: string;
  eventSubject: string;
  redeliveryOf?: string;
  lastStatus?: number;
  eventTime: string;
}

const idsOf = (deliveries: readonly ReceivedDelivery[]) => deliveries.map((d) => String(d.headers["ce-id"]));
const countOf = (deliveries: readonly ReceivedDelivery[], id: string) =>
  idsOf(deliveries).filter((i) => i === id).length;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("webhook redelivery", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let org: string;
  let sub: string;
  let grpcClient: grpc.Client;

  /** Polls `read` until `done` holds (a limit for a loaded machine, not a target). */
  async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const value = await read();
      if (done(value)) return value;
      assert.ok(Date.now() < deadline, `timed out waiting: ${what}`);
      await pause(25);
    }
  }

  async function deliveries(subscription: string, state: string): Promise<DeliveryJson[]> {
    const body = await expectJson<{ deliveries?: DeliveryJson[] }>(
      await server.api(`/events/v2/deliveries?subscriptionUid=${subscription}&state=${state}&pageSize=200`, {
        token: server.adminToken,
      }),
    );
    return body.deliveries ?? [];
  }

  /** Waits until the lane recorded every delivery of `subscription` (none pending). */
  async function drained(subscription: string): Promise<void> {
    await until(
      async () =>
        expectJson<{ status?: { pending?: string } }>(
          await server.api(`/events/v2/subscriptions/${subscription}`, { token: server.adminToken }),
        ),
      (s) => (s.status?.pending ?? "0") === "0",
      `${subscription} drained`,
    );
  }

  const post = (path: string, body: unknown = {}, token = server.adminToken) =>
    server.api(path, { method: "POST", token, body });

  before(async () => {
    server = await startTestServer({ events: EVENTS, config: { eventsAllowLoopback: "true" } });
    receiver = await startWebhookReceiver();
    grpcClient = new grpc.Client(new URL(server.apiUrl).host, grpc.credentials.createInsecure());
    org = await server.create("/iam/v2/groups", { name: "acme" });
    sub = await server.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    await receiver.waitFor((a) => a.length === 1);
  });
  after(async () => {
    grpcClient.close();
    await server.close();
    await receiver.close();
  });

  it("redelivers a delivered delivery: the receiver gets the same CloudEvent id twice, validly signed", async () => {
    const repo = await server.create(`/registry/v2/repos/${org}`, { name: "again" });
    const first = await receiver.waitFor((a) => a.some((d) => d.headers["ce-subject"] === repo));
    const original = first.find((d) => d.headers["ce-subject"] === repo) as ReceivedDelivery;
    const eventId = String(original.headers["ce-id"]);
    const delivered = await until(
      () => deliveries(sub, "delivered"),
      (ds) => ds.some((d) => d.eventId === eventId),
      "the delivery listed as delivered",
    );
    const listed = delivered.find((d) => d.eventId === eventId) as DeliveryJson;
    assert.match(
      listed.uid,
      new RegExp(`^${sub}/[0-9a-f]{16}$`),
      "a delivery uid is <subscription uid>/<16 hex>",
    );
    assert.equal(listed.eventSubject, repo, "the listed delivery is the repo's");

    const again = await expectJson<DeliveryJson>(await post(`/events/v2/deliveries/${listed.uid}:redeliver`));
    assert.equal(again.eventId, eventId, "the new delivery carries the same CloudEvent id");
    assert.equal(again.redeliveryOf, listed.uid, "it names the delivery it sends again");
    assert.notEqual(again.uid, listed.uid, "a new delivery");
    assert.match(again.uid, new RegExp(`^${sub}/[0-9a-f]{16}$`), "under the subscription");

    const both = await receiver.waitFor((a) => countOf(a, eventId) === 2);
    const resent = both.filter((d) => d.headers["ce-id"] === eventId)[1] as ReceivedDelivery;
    assert.equal(resent.body, original.body, "the same body");
    assert.equal(resent.headers["ce-type"], original.headers["ce-type"], "the same type");
    const verify = createWebhookVerifier({ issuer: server.apiUrl, group: org });
    const event = await verify(resent.headers as Record<string, string>, resent.body);
    assert.equal(event.id, eventId, "the redelivery verifies, with the original id");

    const done = await until(
      () => deliveries(sub, "delivered"),
      (ds) => ds.some((d) => d.uid === again.uid),
      "the redelivery listed as delivered",
    );
    const record = done.find((d) => d.uid === again.uid) as DeliveryJson;
    assert.deepEqual([record.attempts, record.lastStatus], ["1", 200], "one attempt, answered 200");
    // The redelivery is itself a change: dev.wharf.api.events.delivery.created.v1 names it.
    const announced = await receiver.waitFor((a) =>
      a.some((d) => d.headers["ce-type"] === "dev.wharf.api.events.delivery.created.v1"),
    );
    assert.ok(
      announced.some((d) => d.headers["ce-subject"] === again.uid),
      "the redelivery's event names the new delivery",
    );
    await pause(200);
    assert.equal(countOf(receiver.accepted(), eventId), 2, "exactly twice");
  });

  it("refuses to redeliver a pending delivery (FAILED_PRECONDITION, DELIVERY_PENDING)", async () => {
    const hanging = await startWebhookReceiver();
    hanging.respondWith("hang");
    try {
      const slow = await server.create(`/events/v2/subscriptions/${org}`, { sink: hanging.url() });
      const [pending] = await until(
        () => deliveries(slow, "pending"),
        (ds) => ds.length > 0,
        "a pending delivery",
      );
      assert.ok(pending, "pending");
      const body = await expectError(await post(`/events/v2/deliveries/${pending.uid}:redeliver`), {
        status: 400,
        code: 9,
        reason: "FAILED_PRECONDITION",
      });
      const violations = (detail(body, "PreconditionFailure")?.violations ?? []) as { type: string }[];
      assert.deepEqual(
        violations.map((v) => v.type),
        ["DELIVERY_PENDING"],
        "the violation names the reason",
      );
      await expectJson(
        await server.api(`/events/v2/subscriptions/${slow}`, { method: "DELETE", token: server.adminToken }),
      );
    } finally {
      await hanging.close();
    }
  });

  it("redrives dead letters: each is sent again with its CloudEvent id and stops being a dead letter", async () => {
    const failing = await startWebhookReceiver();
    failing.respondWith(500);
    try {
      const dlq = await server.create(`/events/v2/subscriptions/${org}`, { sink: failing.url() });
      const repo = await server.create(`/registry/v2/repos/${org}`, { name: "dead" });
      const dead = await until(
        () => deliveries(dlq, "failed"),
        (ds) => ds.some((d) => d.eventSubject === repo),
        "the repo's delivery given up on",
      );
      assert.ok(dead.length >= 2, "its own creation and the repo's are dead letters");
      for (const d of dead) assert.equal(d.attempts, "2", "given up on after --events-max-attempts");
      const refusedIds = new Set(dead.map((d) => d.eventId));

      failing.respondWith(200);
      const redriven = await expectJson<{ requeued: string }>(
        await post(`/events/v2/subscriptions/${dlq}:redrive`),
      );
      assert.equal(redriven.requeued, String(dead.length), "every dead letter requeued");
      assert.deepEqual(await deliveries(dlq, "failed"), [], "no dead letter left");
      const got = await failing.waitFor((a) => [...refusedIds].every((id) => countOf(a, id) === 1));
      assert.ok(
        [...refusedIds].every((id) => idsOf(got).includes(id)),
        "each dead letter arrives with its original ce-id",
      );
      const again = await expectJson<{ requeued: string }>(
        await post(`/events/v2/subscriptions/${dlq}:redrive`),
      );
      assert.equal(again.requeued, "0", "a second redrive finds nothing");
      const status = await until(
        async () =>
          expectJson<{ status: { pending?: string; failed?: string } }>(
            await server.api(`/events/v2/subscriptions/${dlq}`, { token: server.adminToken }),
          ),
        (s) => (s.status.pending ?? "0") === "0",
        "nothing pending",
      );
      assert.equal(status.status.failed ?? "0", "0", "no dead letters counted");
      await expectJson(
        await server.api(`/events/v2/subscriptions/${dlq}`, { method: "DELETE", token: server.adminToken }),
      );
    } finally {
      await failing.close();
    }
  });

  it("replays kept events since a time, to a subscription created after them, with their CloudEvent ids", async () => {
    const since = new Date(Date.now() - 1000).toISOString();
    const repo = await server.create(`/registry/v2/repos/${org}`, { name: "before-late" });
    const firstTime = await receiver.waitFor((a) => a.some((d) => d.headers["ce-subject"] === repo));
    const eventId = String(firstTime.find((d) => d.headers["ce-subject"] === repo)?.headers["ce-id"]);

    const lateReceiver = await startWebhookReceiver();
    try {
      const late = await server.create(`/events/v2/subscriptions/${org}`, { sink: lateReceiver.url() });
      await lateReceiver.waitFor((a) => a.length === 1);
      assert.equal(countOf(lateReceiver.accepted(), eventId), 0, "it was created after the repo");
      await drained(late);
      const replayed = await expectJson<{ requeued: string }>(
        await post(`/events/v2/subscriptions/${late}:replay`, { since }),
      );
      assert.ok(Number(replayed.requeued) >= 1, `requeued ${replayed.requeued}`);
      const got = await lateReceiver.waitFor((a) => countOf(a, eventId) === 1);
      assert.equal(
        got.find((d) => d.headers["ce-id"] === eventId)?.headers["ce-subject"],
        repo,
        "the earlier event, with its own id",
      );

      // A replay to the subscription that received it: the same id again (at-least-once).
      await drained(sub);
      const before = countOf(receiver.accepted(), eventId);
      const again = await expectJson<{ requeued: string }>(
        await post(`/events/v2/subscriptions/${sub}:replay`, { since }),
      );
      assert.ok(Number(again.requeued) >= 1, "requeued for the first subscription too");
      await receiver.waitFor((a) => countOf(a, eventId) === before + 1);

      const future = new Date(Date.now() + 3_600_000).toISOString();
      const none = await expectJson<{ requeued: string }>(
        await post(`/events/v2/subscriptions/${late}:replay`, { since: new Date().toISOString() }),
      );
      assert.equal(none.requeued, "0", "nothing since now");
      await expectError(await post(`/events/v2/subscriptions/${late}:replay`, { since: future }), {
        status: 400,
        code: 3,
        field: "since",
      });
      await expectJson(
        await server.api(`/events/v2/subscriptions/${late}`, { method: "DELETE", token: server.adminToken }),
      );
    } finally {
      await lateReceiver.close();
    }
  });

  it("refuses bad input: unknown and malformed uids, missing or unparsable since, unknown states", async () => {
    const unknownStream = `${sub}/00000000ffffffff`;
    const unknownRedelivery = `${sub}/ffffffffffffffff`;
    for (const uid of [unknownStream, unknownRedelivery]) {
      await expectError(await post(`/events/v2/deliveries/${uid}:redeliver`), { status: 404, code: 5 });
    }
    // A valid uidp that is no delivery uid (a subscription's own), and no uidp at all.
    await expectError(await post(`/events/v2/deliveries/${sub}:redeliver`), {
      status: 400,
      code: 3,
      field: "uid",
    });
    await expectError(await post("/events/v2/deliveries/nope:redeliver"), { status: 400, code: 3 });
    const gone = `${org}/0123456789abcdef`;
    await expectError(await post(`/events/v2/subscriptions/${gone}:redrive`), { status: 404, code: 5 });
    await expectError(
      await post(`/events/v2/subscriptions/${gone}:replay`, { since: "2026-01-01T00:00:00Z" }),
      {
        status: 404,
        code: 5,
      },
    );
    await expectError(await post(`/events/v2/subscriptions/${sub}:replay`, {}), {
      status: 400,
      code: 3,
      field: "since",
    });
    const unparsable = await post(`/events/v2/subscriptions/${sub}:replay`, { since: "yesterday" });
    assert.equal(unparsable.status, 400, `an unparsable since is refused: ${await unparsable.text()}`);
    await expectError(
      await server.api(`/events/v2/deliveries?subscriptionUid=${sub}&state=bogus`, {
        token: server.adminToken,
      }),
      { status: 400, code: 3, field: "state" },
    );
  });

  it("refuses another organization's owner on every redelivery RPC (PERMISSION_DENIED)", async () => {
    const stranger = await registeredPerson(server, "stranger");
    const theirs = await server.create("/iam/v2/groups", { name: "globex" }, stranger.token);
    assert.ok(theirs, "the stranger owns an organization");
    const [delivered] = await deliveries(sub, "delivered");
    assert.ok(delivered, "a delivered delivery of acme");
    const calls = [
      post(`/events/v2/deliveries/${delivered.uid}:redeliver`, {}, stranger.token),
      post(`/events/v2/subscriptions/${sub}:redrive`, {}, stranger.token),
      post(`/events/v2/subscriptions/${sub}:replay`, { since: "2026-01-01T00:00:00Z" }, stranger.token),
    ];
    for (const res of await Promise.all(calls)) await expectError(res, { status: 403, code: 7 });
  });

  it("serves the redelivery RPCs over gRPC", async () => {
    const [delivered] = await deliveries(sub, "delivered");
    assert.ok(delivered, "a delivered delivery");
    const redelivered = await grpcCall(
      grpcClient,
      `${SERVICE}/RedeliverDelivery`,
      { input: subs.RedeliverDeliveryRequestSchema, output: subs.DeliverySchema },
      create(subs.RedeliverDeliveryRequestSchema, { uid: delivered.uid }),
      server.adminToken,
    );
    assert.equal(redelivered.error, undefined, `redeliver: ${redelivered.error?.details}`);
    assert.equal(redelivered.response?.eventId, delivered.eventId, "same CloudEvent id");
    assert.equal(redelivered.response?.redeliveryOf, delivered.uid, "names the original");
    await receiver.waitFor((a) => countOf(a, delivered.eventId) >= 2);

    const redriven = await grpcCall(
      grpcClient,
      `${SERVICE}/RedriveSubscription`,
      { input: subs.RedriveSubscriptionRequestSchema, output: subs.RequeueResponseSchema },
      create(subs.RedriveSubscriptionRequestSchema, { uid: sub }),
      server.adminToken,
    );
    assert.equal(redriven.response?.requeued, 0n, "no dead letters");
    const future = await grpcCall(
      grpcClient,
      `${SERVICE}/ReplaySubscription`,
      { input: subs.ReplaySubscriptionRequestSchema, output: subs.RequeueResponseSchema },
      create(subs.ReplaySubscriptionRequestSchema, {
        uid: sub,
        since: timestampFromDate(new Date(Date.now() + 3_600_000)),
      }),
      server.adminToken,
    );
    assert.equal(future.error?.code, grpc.status.INVALID_ARGUMENT, "since in the future");
    const pendingRefused = await grpcCall(
      grpcClient,
      `${SERVICE}/RedeliverDelivery`,
      { input: subs.RedeliverDeliveryRequestSchema, output: subs.DeliverySchema },
      create(subs.RedeliverDeliveryRequestSchema, { uid: `${sub}/ffffffffffffffff` }),
      server.adminToken,
    );
    assert.equal(pendingRefused.error?.code, grpc.status.NOT_FOUND, "an unknown delivery");
  });

  it("pages deliveries across the subscription's stream and its redeliveries without gaps or repeats", async () => {
    await drained(sub);
    const all = await deliveries(sub, "delivered");
    assert.ok(
      all.some((d) => d.redeliveryOf),
      "the list holds redeliveries",
    );
    assert.ok(
      all.some((d) => !d.redeliveryOf),
      "and the stream's deliveries",
    );
    const walked: string[] = [];
    let token = "";
    for (let pages = 0; pages < 100; pages++) {
      const page = await expectJson<{ deliveries?: DeliveryJson[]; nextPageToken?: string }>(
        await server.api(
          `/events/v2/deliveries?subscriptionUid=${sub}&state=delivered&pageSize=2&pageToken=${token}`,
          { token: server.adminToken },
        ),
      );
      assert.ok((page.deliveries ?? []).length <= 2, "at most a page");
      walked.push(...(page.deliveries ?? []).map((d) => d.uid));
      token = page.nextPageToken ?? "";
      if (token === "") break;
    }
    assert.deepEqual(
      walked,
      all.map((d) => d.uid),
      "the same deliveries in the same order",
    );
    await expectError(
      await server.api(`/events/v2/deliveries?subscriptionUid=${sub}&pageToken=bm9wZQ`, {
        token: server.adminToken,
      }),
      { status: 400, code: 3, field: "page_token" },
    );
  });

  it("follows the list conventions: totalCount, skip, a token bound to its state, refusals", async () => {
    await drained(sub);
    const all = await deliveries(sub, "delivered");
    assert.ok(all.length >= 6, `enough deliveries to page (${all.length})`);
    type Page = {
      deliveries?: DeliveryJson[];
      nextPageToken?: string;
      totalCount?: string;
      skipped?: number;
    };
    const list = (query: string) =>
      server.api(`/events/v2/deliveries?subscriptionUid=${sub}&${query}`, { token: server.adminToken });
    const first = await expectJson<Page>(await list("state=delivered&pageSize=2&skip=1"));
    assert.equal(first.totalCount, String(all.length), "totalCount counts every delivered delivery");
    assert.equal(first.skipped, 1);
    assert.deepEqual(
      (first.deliveries ?? []).map((d) => d.uid),
      all.slice(1, 3).map((d) => d.uid),
      "skip passes over the first",
    );
    const second = await expectJson<Page>(
      await list(`state=delivered&pageSize=2&skip=1&pageToken=${first.nextPageToken}`),
    );
    assert.deepEqual(
      (second.deliveries ?? []).map((d) => d.uid),
      all.slice(4, 6).map((d) => d.uid),
      "skip applies after the cursor too",
    );
    assert.equal(second.skipped, 2, "skipped accumulates");
    const none = await expectJson<Page>(await list("state=pending"));
    assert.equal(none.totalCount, "0", "nothing pending once drained");
    await expectError(await list(`state=failed&pageSize=2&pageToken=${first.nextPageToken}`), {
      status: 400,
      code: 3,
      field: "page_token",
    });
    await expectError(await list("pageSize=-1"), { status: 400, code: 3, field: "page_size" });
    await expectError(await list("skip=-1"), { status: 400, code: 3, field: "skip" });
    await expectError(await list("skip=10001"), { status: 400, code: 3, field: "skip" });
    await expectError(await list("orderBy=create_time%20desc"), { status: 400, code: 3, field: "order_by" });
    await expectError(await list("orderBy=name"), { status: 400, code: 3, field: "order_by" });
    const ordered = await expectJson<Page>(await list("state=delivered&orderBy=create_time&pageSize=200"));
    assert.deepEqual(
      (ordered.deliveries ?? []).map((d) => d.uid),
      all.map((d) => d.uid),
    );
  });
});

describe("webhook redelivery: event retention", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;

  before(async () => {
    // Events are kept 3 s and swept every 100 ms: the retention's edge within a test.
    server = await startTestServer({
      events: { ...EVENTS, retentionMs: 3000, retentionSweepMs: 100 },
      config: { eventsAllowLoopback: "true" },
    });
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  it("a delivered event is redeliverable within the retention, and pruned by the sweep after it", async () => {
    const org = await server.create("/iam/v2/groups", { name: "acme" });
    const sub = await server.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    await receiver.waitFor((a) => a.length === 1);
    const list = async () =>
      (
        await expectJson<{ deliveries?: DeliveryJson[] }>(
          await server.api(`/events/v2/deliveries?subscriptionUid=${sub}&state=delivered`, {
            token: server.adminToken,
          }),
        )
      ).deliveries ?? [];
    // The lane records the delivery right after the receiver answered.
    let delivered: DeliveryJson | undefined;
    const listedBy = Date.now() + 30_000;
    while (!delivered) {
      assert.ok(Date.now() < listedBy, "listed as delivered");
      [delivered] = await list();
      if (!delivered) await pause(25);
    }
    const eventTime = Date.parse(delivered.eventTime);
    // Once pruned, the delivery is gone from the list and cannot be redelivered.
    const deadline = Date.now() + 30_000;
    while ((await list()).some((d) => d.uid === delivered.uid)) {
      assert.ok(Date.now() < deadline, "the sweep pruned the event");
      await pause(50);
    }
    assert.ok(Date.now() - eventTime >= 3000, "kept for the retention, not pruned at delivery");
    await expectError(
      await server.api(`/events/v2/deliveries/${delivered.uid}:redeliver`, {
        method: "POST",
        token: server.adminToken,
        body: {},
      }),
      { status: 404, code: 5 },
    );
    const replayed = await expectJson<{ requeued: string }>(
      await server.api(`/events/v2/subscriptions/${sub}:replay`, {
        method: "POST",
        token: server.adminToken,
        body: { since: new Date(eventTime - 60_000).toISOString() },
      }),
    );
    assert.equal(replayed.requeued, "0", "replay reaches nothing pruned");
  });
});
