import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { expectError, expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { parsePrometheusText, type Sample, sampleValue } from "../support/prometheus-text.js";
import { buildImage, OCI_MANIFEST, pushImage } from "../support/registry-push.js";
import { startWebhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// /healthz and /readyz on both ports, /metrics on the API port: who may read it, and that its
// series move with the traffic, garbage collection and event delivery they describe.

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The webhook receiver listens on loopback, which sinks may reach only where the server allows it. */
const LOOPBACK_SINKS: Record<string, string> = { eventsAllowLoopback: "true" };

/** GETs `path` on both ports; returns [api, registry] status and body. */
async function probeBoth(server: TestServer, path: string): Promise<{ status: number; body: string }[]> {
  return Promise.all(
    [server.apiUrl, server.registryUrl].map(async (base) => {
      const res = await fetch(`${base}${path}`);
      return { status: res.status, body: await res.text() };
    }),
  );
}

async function scrape(server: TestServer, token: string | undefined = server.adminToken): Promise<Sample[]> {
  const res = await server.api("/metrics", token === undefined ? {} : { token });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(text);
}

/**
 * Polls until `predicate` holds for a scrape (every 50 ms, up to 30 s: delivery runs on a worker
 * thread that may start slowly on a loaded machine); returns that scrape.
 */
async function scrapeUntil(server: TestServer, predicate: (s: Sample[]) => boolean): Promise<Sample[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const samples = await scrape(server);
    if (predicate(samples)) return samples;
    assert.ok(Date.now() < deadline, "the metrics did not reach the expected values in 30 s");
    await pause(50);
  }
}

forEachEngine("health and readiness", (db) => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ databaseUrl: (await db.freshOptions()).databaseUrl ?? "" });
  });
  after(() => server?.close());

  it("both ports answer /healthz and /readyz anonymously, and probes are not logged", async () => {
    for (const { status, body } of await probeBoth(server, "/healthz")) {
      assert.equal(status, 200);
      assert.equal(body, "ok\n");
    }
    for (const { status, body } of await probeBoth(server, "/readyz")) {
      assert.equal(status, 200, body);
      assert.deepEqual(JSON.parse(body), { status: "ready", database: "ok", blobs: "ok" });
    }
    const head = await fetch(`${server.registryUrl}/readyz`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "", "HEAD has no body");
    const logged = server.logLines.filter((l) => l.path === "/healthz" || l.path === "/readyz");
    assert.deepEqual(logged, [], "successful probes write no log line");
  });

  it("other methods are refused with 405 in each port's error format", async () => {
    await expectError(await server.api("/readyz", { method: "POST" }), { status: 405, code: 12 });
    const res = await fetch(`${server.registryUrl}/healthz`, { method: "DELETE" });
    assert.equal(res.status, 405);
    assert.equal(((await res.json()) as { errors: { code: string }[] }).errors[0]?.code, "UNSUPPORTED");
  });

  it("/readyz is 503 naming blobs once the blob folder is gone, and the failure is logged once", async () => {
    await rm(join(server.dataDir, "blobs"), { recursive: true, force: true });
    for (let i = 0; i < 2; i++) {
      for (const { status, body } of await probeBoth(server, "/readyz")) {
        assert.equal(status, 503, body);
        assert.deepEqual(JSON.parse(body), { status: "unavailable", database: "ok", blobs: "failing" });
      }
    }
    const failing = server.logLines.filter((l) => l.msg === "readiness failing");
    assert.equal(failing.length, 1, "one line when blobs start failing, not one per probe");
    assert.equal(failing[0]?.part, "blobs");
    const healthz = await probeBoth(server, "/healthz");
    assert.deepEqual(
      healthz.map((h) => h.status),
      [200, 200],
      "liveness does not depend on the dependencies",
    );
  });

  it("/readyz is 503 naming the database once the database is closed", async () => {
    await server.store.close();
    for (const { status, body } of await probeBoth(server, "/readyz")) {
      assert.equal(status, 503, body);
      assert.equal(JSON.parse(body).database, "failing");
    }
  });
});

describe("/metrics access", () => {
  let server: TestServer;
  let open: TestServer;
  before(async () => {
    server = await startTestServer();
    open = await startTestServer({ config: { metricsPublic: "true" } });
  });
  after(async () => {
    await server?.close();
    await open?.close();
  });

  it("is refused without a token (401) and with a token of anyone but the administrator (403)", async () => {
    await expectError(await server.api("/metrics"), { status: 401, code: 16 });
    await expectError(await server.api("/metrics", { token: "not-a-jwt" }), { status: 401, code: 16 });
    const someone = await server.tokenFor("0123456789abcdef0123456789abcdef01234567");
    await expectError(await server.api("/metrics", { token: someone }), { status: 403, code: 7 });
  });

  it("is served to the administrator, and to anyone with --metrics-public", async () => {
    const samples = await scrape(server);
    assert.ok(sampleValue(samples, "wharf_process_cpu_seconds_total") !== undefined, "process metrics");
    assert.ok(sampleValue(samples, "wharf_nodejs_eventloop_lag_seconds") !== undefined, "event loop lag");
    const anonymous = await scrape(open, undefined);
    assert.ok(sampleValue(anonymous, "wharf_process_resident_memory_bytes") !== undefined);
  });

  it("each server has its own registry: one server's traffic does not show in another's", async () => {
    await server.api("/ping/v2/ping");
    await server.api("/ping/v2/ping");
    const ping = { route: "platform.ping.v2.PingService/Ping", code: "OK", status: "200" };
    assert.equal(sampleValue(await scrape(server), "wharf_api_requests_total", ping), 2);
    assert.equal(sampleValue(await scrape(open, undefined), "wharf_api_requests_total", ping), undefined);
  });
});

describe("/metrics series", () => {
  let server: TestServer;
  let receiver: WebhookReceiver;
  before(async () => {
    server = await startTestServer({
      config: { gcInterval: "1s", eventsMaxAttempts: "3", ...LOOPBACK_SINKS },
      // Retries 1.5–3 s apart: the failing delivery stays owed long enough to see its lag grow.
      events: { backoffBaseMs: 3000, backoffMaxMs: 3000, pollMs: 50 },
    });
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await server?.close();
    await receiver?.close();
  });

  it("API requests are counted by RPC, code and status, with latency, never by raw path", async () => {
    await server.create("/iam/v2/groups", { name: "metrics-api" });
    const missing = "/iam/v2/groups/0000000000000000000000000000000000000000";
    await expectError(await server.api(missing, { token: server.adminToken }), {
      status: 404,
      code: 5,
    });
    await server.api("/no/such/path/8d1f3c");
    const samples = await scrape(server);
    const create = "platform.iam.v2.GroupsService/CreateGroup";
    assert.equal(
      sampleValue(samples, "wharf_api_requests_total", { route: create, code: "OK", status: "200" }),
      1,
    );
    assert.equal(
      sampleValue(samples, "wharf_api_requests_total", {
        route: "platform.iam.v2.GroupsService/GetGroup",
        code: "NOT_FOUND",
        status: "404",
      }),
      1,
    );
    assert.equal(sampleValue(samples, "wharf_api_request_duration_seconds_count", { route: create }), 1);
    assert.ok((sampleValue(samples, "wharf_api_request_duration_seconds_sum", { route: create }) ?? 0) > 0);
    assert.ok(
      (sampleValue(samples, "wharf_api_requests_total", { route: "unrouted", status: "404" }) ?? 0) >= 1,
      "an unknown path counts as unrouted",
    );
    const routes = new Set(
      samples.filter((s) => s.name === "wharf_api_requests_total").map((s) => s.labels.route),
    );
    assert.ok(![...routes].some((r) => r?.includes("8d1f3c")), "no raw path becomes a label");
  });

  it("registry requests, bytes, pushes and pulls move with a push and a pull", async () => {
    await server.create("/iam/v2/groups", { name: "metrics-reg" });
    const token = await server.registryToken();
    const before = await scrape(server);
    const image = buildImage("metrics", ["a layer of metrics test bytes ".repeat(1000)]);
    await pushImage(server, "metrics-reg/app", "v1", token, image);
    const get = await server.registry("/v2/metrics-reg/app/manifests/v1", {
      token,
      headers: { accept: OCI_MANIFEST },
    });
    assert.equal(get.status, 200);
    await get.arrayBuffer();
    const head = await server.registry("/v2/metrics-reg/app/manifests/v1", { method: "HEAD", token });
    assert.equal(head.status, 200);
    const after = await scrapeUntil(server, (s) => (sampleValue(s, "wharf_registry_pulls_total") ?? 0) >= 1);
    const delta = (name: string, labels: Record<string, string> = {}) =>
      (sampleValue(after, name, labels) ?? 0) - (sampleValue(before, name, labels) ?? 0);
    assert.equal(delta("wharf_registry_pushes_total"), 1, "one manifest PUT");
    assert.equal(delta("wharf_registry_pulls_total"), 1, "one manifest GET (the HEAD is not a pull)");
    assert.equal(
      delta("wharf_registry_requests_total", { route: "manifest", method: "PUT", status: "201" }),
      1,
    );
    assert.equal(
      delta("wharf_registry_requests_total", { route: "manifest", method: "HEAD", status: "200" }),
      1,
    );
    assert.ok(
      delta("wharf_registry_request_duration_seconds_count", { route: "manifest", method: "GET" }) >= 1,
    );
    const layerBytes = 30 * 1000;
    assert.ok(delta("wharf_registry_received_bytes_total") > layerBytes, "the pushed layer came in");
    assert.ok(delta("wharf_registry_sent_bytes_total") > 0, "answers went out");
  });

  it("garbage collection runs are counted with their duration and what they removed", async () => {
    const samples = await scrapeUntil(
      server,
      (s) => (sampleValue(s, "wharf_gc_runs_total", { outcome: "success" }) ?? 0) >= 1,
    );
    assert.equal(sampleValue(samples, "wharf_gc_runs_total", { outcome: "error" }), 0);
    assert.ok((sampleValue(samples, "wharf_gc_duration_seconds_count") ?? 0) >= 1);
    for (const kind of ["manifests", "links", "blobs", "uploads", "strayObjects"]) {
      assert.ok(sampleValue(samples, "wharf_gc_removed_objects_total", { kind }) !== undefined, kind);
    }
    assert.ok(sampleValue(samples, "wharf_gc_removed_bytes_total") !== undefined);
  });

  it("event delivery: pending and lag while a sink fails, then a dead letter", async () => {
    const org = await server.create("/iam/v2/groups", { name: "metrics-events" });
    receiver.respondWith(500);
    await server.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url() });
    const pending = await scrapeUntil(
      server,
      (s) => (sampleValue(s, "wharf_events_pending_deliveries") ?? 0) >= 1 && receiver.received.length >= 1,
    );
    assert.equal(sampleValue(pending, "wharf_events_backlog_up"), 1);
    const lagging = await scrapeUntil(
      server,
      (s) => (sampleValue(s, "wharf_events_delivery_lag_seconds") ?? 0) >= 1,
    );
    assert.equal(sampleValue(lagging, "wharf_events_dead_letters"), 0, "still retrying");
    const dead = await scrapeUntil(server, (s) => sampleValue(s, "wharf_events_dead_letters") === 1);
    assert.equal(receiver.received.length, 3, "given up after 3 attempts");
    assert.equal(sampleValue(dead, "wharf_events_pending_deliveries"), 0);
    assert.equal(sampleValue(dead, "wharf_events_delivery_lag_seconds"), 0);
  });
});

describe("/metrics answers while the database is gone", () => {
  it("the event gauges report the store as down instead of failing the scrape", async () => {
    const server = await startTestServer({ config: { metricsPublic: "true" } });
    try {
      await server.store.close();
      const samples = await scrape(server, undefined);
      assert.equal(sampleValue(samples, "wharf_events_backlog_up"), 0);
      const body = await expectJson<{ status: string }>(await server.api("/readyz"), 503);
      assert.equal(body.status, "unavailable");
    } finally {
      await server.close();
    }
  });
});
