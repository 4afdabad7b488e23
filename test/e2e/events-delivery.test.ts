import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createWebhookVerifier, WebhookVerificationError } from "wharf/webhook-verifier";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { createTestDatabase, engineSkipReason } from "../support/databases.js";
import { registeredPerson } from "../support/registered-person.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { fakeSinkResolver, NO_DELIVERY } from "../support/sink-dns.js";
import {
  type ReceivedDelivery,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const FAST_RETRIES = { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50 };
/** The receivers listen on loopback, which sinks may reach only when the server allows it. */
const LOOPBACK_SINKS = { eventsAllowLoopback: "true" };

function typesOf(deliveries: ReceivedDelivery[]): string[] {
  return deliveries.map((d) => String(d.headers["ce-type"]));
}

function subjectsOf(deliveries: ReceivedDelivery[], type: string): string[] {
  return deliveries.filter((d) => d.headers["ce-type"] === type).map((d) => String(d.headers["ce-subject"]));
}

describe("event delivery", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let org: string;

  before(async () => {
    server = await startTestServer({
      events: FAST_RETRIES,
      pullEvents: { flushMs: 50, subscribedTtlMs: 100 },
      config: LOOPBACK_SINKS,
    });
    receiver = await startWebhookReceiver();
    org = await server.create("/iam/v2/groups", { name: "acme" });
    await server.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    await receiver.waitFor((a) => a.length === 1);
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  it("a push produces exactly one push event with CloudEvents headers and a verifiable signature", async () => {
    const before = receiver.accepted().length;
    const image = buildImage("events-push");
    await pushImage(server, "acme/app", "v1", await server.registryToken(), image);
    const all = await receiver.waitFor((a) => typesOf(a).includes("dev.wharf.registry.push.v1"));
    await pause(200);
    const pushes = receiver.accepted().filter((d) => d.headers["ce-type"] === "dev.wharf.registry.push.v1");
    assert.equal(pushes.length, 1, `one push event, got ${typesOf(all.slice(before)).join(", ")}`);
    const push = pushes[0] as ReceivedDelivery;
    const repos = await expectJson<{ repos: { uid: string }[] }>(
      await server.api(`/registry/v2/repos?uidp.descendants_of=${org}&name=app`, {
        token: server.adminToken,
      }),
    );
    const repoUid = repos.repos[0]?.uid as string;
    assert.equal(push.headers["ce-specversion"], "1.0", "spec version");
    assert.match(String(push.headers["ce-id"]), /^[0-9a-f-]{36}$/, "ce-id is a UUID");
    assert.equal(push.headers["ce-source"], server.registryUrl, "registry events come from the registry");
    assert.equal(push.headers["ce-subject"], repoUid, "subject is the repo");
    assert.equal(push.headers["ce-group"], org, "group is the repo's group");
    assert.match(
      String(push.headers["ce-time"]),
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
      "RFC 3339 time",
    );
    assert.equal(push.headers["ce-digest"], image.digest, "digest extension");
    assert.equal(push.headers["content-type"], "application/json", "JSON body");

    const verify = createWebhookVerifier({ issuer: server.apiUrl, group: org });
    const event = await verify(push.headers as Record<string, string>, push.body);
    assert.equal(event.type, "dev.wharf.registry.push.v1", "verified type");
    assert.equal(event.actor.subject, ADMIN_IDENTITY_UID, "the pusher is the actor");
    const body = event.body as Record<string, unknown>;
    assert.equal(body.repository, "acme/app", "repository as requested");
    assert.equal(body.repo_id, repoUid, "repo id");
    assert.equal(body.tag, "v1", "tag");
    assert.equal(body.digest, image.digest, "digest");
    assert.equal(body.tag_previous_digest, undefined, "a new tag had no previous digest");

    // The push created the repo: one repo.created event, in the same transaction.
    assert.deepEqual(subjectsOf(receiver.accepted(), "dev.wharf.api.registry.repo.created.v1"), [repoUid]);
  });

  it("a manifest GET produces a pull event (batched); HEAD and blob GETs do not", async () => {
    const token = await server.registryToken();
    const image = buildImage("events-pull");
    await pushImage(server, "acme/pulled", "v1", token, image);
    await receiver.waitFor((a) => subjectsOf(a, "dev.wharf.registry.push.v1").length === 2);
    await pause(250); // the pull batcher learns of new subscriptions within subscribedTtlMs
    const head = await server.registry("/v2/acme/pulled/manifests/v1", {
      method: "HEAD",
      token,
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    });
    assert.equal(head.status, 200, "HEAD works");
    const blob = await server.registry(`/v2/acme/pulled/blobs/${image.configDigest}`, { token });
    assert.equal(blob.status, 200, "blob GET works");
    await blob.arrayBuffer();
    const res = await server.registry("/v2/acme/pulled/manifests/v1", {
      token,
      headers: { accept: "application/vnd.oci.image.manifest.v1+json", "user-agent": "events-test/1" },
    });
    assert.equal(res.status, 200, "GET works");
    await res.arrayBuffer();
    const pulls = await receiver.waitFor((a) => typesOf(a).includes("dev.wharf.registry.pull.v1"));
    await pause(300);
    const pull = receiver.accepted().filter((d) => d.headers["ce-type"] === "dev.wharf.registry.pull.v1");
    assert.equal(
      pull.length,
      1,
      `one pull event for one manifest GET (not the HEAD, not the blob), got ${typesOf(pulls).join(", ")}`,
    );
    const body = JSON.parse((pull[0] as ReceivedDelivery).body).body as Record<string, unknown>;
    assert.equal(body.method, "GET", "method");
    assert.equal(body.tag, "v1", "tag pulled");
    assert.equal(body.digest, image.digest, "digest pulled");
    assert.equal(body.user_agent, "events-test/1", "user agent");
  });

  it("a receiver that fails and recovers gets every event once, in order, after back-off", async () => {
    receiver.respondWith(503);
    const start = receiver.received.length;
    const names = ["r1", "r2", "r3"];
    const uids: string[] = [];
    for (const name of names) uids.push(await server.create(`/registry/v2/repos/${org}`, { name }));
    // Wait until the first event was refused at least twice (backing off between attempts).
    const deadline = Date.now() + 30_000; // a limit for a loaded machine, not a target
    while (receiver.received.slice(start).filter((d) => d.status === 503).length < 2) {
      assert.ok(Date.now() < deadline, "the sink was retried");
      await pause(20);
    }
    const refused = receiver.received.slice(start).filter((d) => d.status === 503);
    assert.ok(
      refused.every((d) => d.headers["ce-subject"] === uids[0]),
      "in order: later events wait while the first is retried",
    );
    receiver.respondWith(200);
    await receiver.waitFor((a) =>
      uids.every((uid) => subjectsOf(a, "dev.wharf.api.registry.repo.created.v1").includes(uid)),
    );
    await pause(200);
    const delivered = subjectsOf(receiver.accepted(), "dev.wharf.api.registry.repo.created.v1").filter((s) =>
      uids.includes(s),
    );
    assert.deepEqual(delivered, uids, "each event once, in the order of the changes");
  });

  it("a subscription in another organization receives nothing of this one", async () => {
    const other = await startWebhookReceiver();
    try {
      const otherOrg = await server.create("/iam/v2/groups", { name: "globex" });
      const sub = await server.create(`/events/v2/subscriptions/${otherOrg}`, { sink: other.url() });
      await other.waitFor((a) => a.length === 1);
      await server.create(`/registry/v2/repos/${org}`, { name: "not-for-globex" });
      await receiver.waitFor((a) => typesOf(a).includes("dev.wharf.api.registry.repo.created.v1"));
      await pause(300);
      assert.deepEqual(
        other.accepted().map((d) => d.headers["ce-subject"]),
        [sub],
        "only the other organization's own subscription event",
      );
    } finally {
      await other.close();
    }
  });

  it("deleting a subscription stops delivery at once, pending events included", async () => {
    const late = await startWebhookReceiver();
    try {
      const sub = await server.create(`/events/v2/subscriptions/${org}`, { sink: late.url() });
      await late.waitFor((a) => a.length === 1);
      late.respondWith(500);
      await server.create(`/registry/v2/repos/${org}`, { name: "owed" });
      const deadline = Date.now() + 30_000; // a limit for a loaded machine, not a target
      while (late.received.length < 2) {
        assert.ok(Date.now() < deadline, "the owed event was attempted");
        await pause(20);
      }
      const status = await expectJson<{ status?: { pending?: string } }>(
        await server.api(`/events/v2/subscriptions/${sub}`, { token: server.adminToken }),
      );
      assert.equal(status.status?.pending, "1", "one delivery pending while the sink fails");
      const deleted = await server.api(`/events/v2/subscriptions/${sub}`, {
        method: "DELETE",
        token: server.adminToken,
      });
      assert.equal(deleted.status, 200, "deleted");
      late.respondWith(200);
      const seen = late.received.length;
      await server.create(`/registry/v2/repos/${org}`, { name: "after-delete" });
      await pause(600);
      assert.equal(late.received.length, seen, "nothing more arrives: neither the owed event nor new ones");
      await expectError(
        await server.api(`/events/v2/deliveries?subscription_uid=${sub}`, { token: server.adminToken }),
        { status: 404, code: 5 },
      );
    } finally {
      await late.close();
    }
  });
});

describe("event delivery: dead letters", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;

  before(async () => {
    server = await startTestServer({
      events: FAST_RETRIES,
      config: { ...LOOPBACK_SINKS, eventsMaxAttempts: "3" },
    });
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  it("after the retry limit a delivery is marked failed, visible, and the next event goes out", async () => {
    const org = await server.create("/iam/v2/groups", { name: "acme" });
    receiver.respondWith(500);
    const sub = await server.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    const deadline = Date.now() + 30_000; // a limit for a loaded machine, not a target
    while (receiver.received.length < 3) {
      assert.ok(Date.now() < deadline, "three attempts were made");
      await pause(20);
    }
    receiver.respondWith(200);
    const repo = await server.create(`/registry/v2/repos/${org}`, { name: "next" });
    await receiver.waitFor((a) => subjectsOf(a, "dev.wharf.api.registry.repo.created.v1").includes(repo));
    assert.equal(
      receiver.received.filter((d) => d.headers["ce-subject"] === sub).length,
      3,
      "the failed event was attempted exactly maxAttempts times",
    );
    const failed = await expectJson<{ deliveries: Record<string, unknown>[] }>(
      await server.api(`/events/v2/deliveries?subscription_uid=${sub}&state=failed`, {
        token: server.adminToken,
      }),
    );
    assert.equal(failed.deliveries.length, 1, "one dead letter");
    assert.equal(failed.deliveries[0]?.eventType, "dev.wharf.api.events.subscription.created.v1", "its type");
    assert.equal(failed.deliveries[0]?.attempts, "3", "its attempts");
    assert.equal(failed.deliveries[0]?.lastStatus, 500, "its last status");
    // The receiver has the next event before the dispatcher records it as delivered: poll briefly.
    const statusDeadline = Date.now() + 5_000;
    let got: { status?: { failed?: string; pending?: string } };
    for (;;) {
      got = await expectJson<{ status?: { failed?: string; pending?: string } }>(
        await server.api(`/events/v2/subscriptions/${sub}`, { token: server.adminToken }),
      );
      if (got.status?.pending === undefined || Date.now() > statusDeadline) break;
      await pause(20);
    }
    assert.equal(got.status?.failed, "1", "the subscription shows the dead letter");
    assert.equal(got.status?.pending, undefined, "nothing pending");
    const listed = await expectJson<{ subscriptions: { uid: string; status?: { failed?: string } }[] }>(
      await server.api(`/events/v2/subscriptions?uidp.ids=${sub}`, { token: server.adminToken }),
    );
    assert.equal(listed.subscriptions[0]?.uid, sub, "listed");
    assert.equal(listed.subscriptions[0]?.status?.failed, "1", "the list shows the same status as Get");
  });
});

describe("webhook verifier refuses forged deliveries", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  let delivery: ReceivedDelivery;
  let org: string;

  before(async () => {
    server = await startTestServer({ config: LOOPBACK_SINKS });
    receiver = await startWebhookReceiver();
    org = await server.create("/iam/v2/groups", { name: "acme" });
    await server.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    delivery = (await receiver.waitFor((a) => a.length === 1))[0] as ReceivedDelivery;
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  async function refusal(promise: Promise<unknown>): Promise<number> {
    try {
      await promise;
    } catch (err) {
      if (err instanceof WebhookVerificationError) return err.status;
      throw err;
    }
    return 200;
  }

  it("accepts the genuine delivery and refuses tampering, other groups and missing tokens", async () => {
    const headers = delivery.headers as Record<string, string>;
    const verify = createWebhookVerifier({ issuer: server.apiUrl, group: org });
    assert.equal(await refusal(verify(headers, delivery.body)), 200, "genuine");
    assert.equal(await refusal(verify(headers, `${delivery.body} `)), 403, "tampered body");
    assert.equal(
      await refusal(
        createWebhookVerifier({ issuer: server.apiUrl, group: `${org}x` })(headers, delivery.body),
      ),
      403,
      "another group's subscription",
    );
    const { authorization: _, ...unsigned } = headers;
    assert.equal(await refusal(verify(unsigned, delivery.body)), 401, "no token");
    const forged = `${headers.authorization?.slice(0, -4)}AAAA`;
    assert.equal(
      await refusal(verify({ ...headers, authorization: forged }, delivery.body)),
      403,
      "bad signature",
    );
    const apiToken = await server.tokenFor(ADMIN_IDENTITY_UID);
    assert.equal(
      await refusal(verify({ ...headers, authorization: `Bearer ${apiToken}` }, delivery.body)),
      403,
      "a platform token is not a delivery token (audience)",
    );
    const { "ce-id": __, ...noId } = headers;
    assert.equal(await refusal(verify(noId, delivery.body)), 400, "not a CloudEvent");
  });
});

describe("subscriptions API", () => {
  let server: TestServer;
  let org: string;

  before(async () => {
    // hooks.example.com is simulated: this machine has no DNS, and this server delivers nothing, as
    // its sinks are no receivers.
    server = await startTestServer({
      resolveSinkHost: fakeSinkResolver({ "hooks.example.com": ["203.0.113.10"] }),
      events: NO_DELIVERY,
    });
    org = await server.create("/iam/v2/groups", { name: "acme" });
  });
  after(() => server.close());

  it("refuses bad sinks with a clear error and writes nothing", async () => {
    for (const sink of [
      "",
      "not a url",
      "ftp://hooks.example.com/x",
      "http://hooks.example.com/x",
      "https://user:pw@hooks.example.com/x",
      "https://hooks.example.com/x#frag",
    ]) {
      const body = await expectError(
        await server.api(`/events/v2/subscriptions/${org}`, {
          method: "POST",
          token: server.adminToken,
          body: { sink },
        }),
        { status: 400, code: 3, field: "sink" },
      );
      assert.match(body.message, /sink/, `the error names the sink for "${sink}"`);
    }
    const list = await expectJson<{ subscriptions?: unknown[] }>(
      await server.api(`/events/v2/subscriptions?uidp.descendants_of=${org}`, { token: server.adminToken }),
    );
    assert.equal(list.subscriptions?.length ?? 0, 0, "nothing was created");
  });

  it("other organizations cannot see, create or delete a group's subscriptions", async () => {
    const sub = await server.create(`/events/v2/subscriptions/${org}`, {
      sink: "https://hooks.example.com/acme",
    });
    const { token } = await registeredPerson(server, "mallory");
    await server.create("/iam/v2/groups", { name: "mallory-org" }, token);
    await expectError(await server.api(`/events/v2/subscriptions/${sub}`, { token }), {
      status: 403,
      code: 7,
    });
    await expectError(
      await server.api(`/events/v2/subscriptions/${org}`, {
        method: "POST",
        token,
        body: { sink: "https://evil.example.com/" },
      }),
      { status: 403, code: 7 },
    );
    await expectError(await server.api(`/events/v2/subscriptions/${sub}`, { method: "DELETE", token }), {
      status: 403,
      code: 7,
    });
    await expectError(await server.api(`/events/v2/deliveries?subscription_uid=${sub}`, { token }), {
      status: 403,
      code: 7,
    });
    const listed = await expectJson<{ subscriptions?: { uid: string }[] }>(
      await server.api("/events/v2/subscriptions", { token }),
    );
    assert.deepEqual(listed.subscriptions ?? [], [], "lists only what the caller may see");
    const mine = await expectJson<{ subscriptions?: { uid: string; sink: string }[] }>(
      await server.api("/events/v2/subscriptions", { token: server.adminToken }),
    );
    assert.deepEqual(
      mine.subscriptions?.map((s) => s.uid),
      [sub],
      "the administrator sees it",
    );
  });
});

const pgSkip = engineSkipReason("postgres");

describe("several server processes share delivery [postgres]", { skip: pgSkip }, () => {
  const db = createTestDatabase("postgres");
  const servers: TestServer[] = [];
  let receiver: WebhookReceiver;

  before(async () => {
    const { databaseUrl } = await db.freshOptions();
    for (let i = 0; i < 3; i++)
      servers.push(await startTestServer({ databaseUrl, events: { pollMs: 30 }, config: LOOPBACK_SINKS }));
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await receiver.close();
    await db.dispose();
  });

  it("each event is delivered once although three dispatchers poll the same outbox", async () => {
    const [a, b, c] = servers as [TestServer, TestServer, TestServer];
    const org = await a.create("/iam/v2/groups", { name: "acme" });
    // Several subscriptions: the dispatchers can all hold lanes at once.
    for (let i = 0; i < 4; i++)
      await a.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url(`/s${i}`) });
    const repos: string[] = [];
    for (let i = 0; i < 30; i++) {
      const via = [a, b, c][i % 3] as TestServer;
      repos.push(await via.create(`/registry/v2/repos/${org}`, { name: `r${i}` }));
    }
    await receiver.waitFor(
      (got) => subjectsOf(got, "dev.wharf.api.registry.repo.created.v1").length >= repos.length * 4,
      30_000,
    );
    await pause(500);
    const byPath = new Map<string, string[]>();
    for (const d of receiver.accepted()) {
      if (d.headers["ce-type"] !== "dev.wharf.api.registry.repo.created.v1") continue;
      const path = d.path;
      byPath.set(path, [...(byPath.get(path) ?? []), String(d.headers["ce-subject"])]);
    }
    assert.equal(byPath.size, 4, "every subscription received events");
    for (const [path, subjects] of byPath) {
      assert.deepEqual(subjects, repos, `${path}: every event exactly once, in order`);
    }
  });
});
