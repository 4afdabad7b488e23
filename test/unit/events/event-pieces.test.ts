import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../../src/config/config.js";
import { backoffDelay } from "../../../src/events/event-dispatcher.js";
import { createSinkAddressPolicy } from "../../../src/events/sink-address-policy.js";
import { systemSinkResolver } from "../../../src/events/sink-host.js";
import { validateSink } from "../../../src/events/sink-url.js";
import { createWebhookSender } from "../../../src/events/webhook-sender.js";
import { startWebhookReceiver } from "../../support/webhook-receiver.js";

/** The receivers here listen on loopback, which senders refuse unless allowed. */
const LOOPBACK_ALLOWED = {
  policy: createSinkAddressPolicy({ allow: [], allowLoopback: true }),
  resolve: systemSinkResolver,
};

describe("backoffDelay", () => {
  it("doubles per attempt within [half, full] of the ceiling and stops at the cap", () => {
    const low = () => 0;
    const high = () => 0.999999;
    assert.equal(backoffDelay(1, 1000, 60_000, low), 500, "first retry: at least half the base");
    assert.equal(backoffDelay(1, 1000, 60_000, high), 1000, "first retry: at most the base");
    assert.equal(backoffDelay(4, 1000, 60_000, high), 8000, "fourth retry: base · 2^3");
    assert.equal(backoffDelay(30, 1000, 60_000, high), 60_000, "capped");
    assert.equal(
      backoffDelay(1000, 1000, 60_000, low),
      30_000,
      "huge attempt counts stay capped, no overflow",
    );
    const spread = new Set(Array.from({ length: 50 }, () => backoffDelay(5, 1000, 60_000)));
    assert.ok(spread.size > 10, "jitter spreads retries of sinks that failed together");
  });
});

describe("validateSink", () => {
  it("accepts https anywhere and http only on loopback unless allowed", () => {
    assert.equal(validateSink("https://hooks.example.com/x", false), "https://hooks.example.com/x", "https");
    assert.equal(validateSink("http://127.0.0.1:9000/h", false), "http://127.0.0.1:9000/h", "loopback http");
    assert.equal(validateSink("http://[::1]:9000/h", false), "http://[::1]:9000/h", "IPv6 loopback http");
    assert.equal(validateSink("http://hooks.internal/h", true), "http://hooks.internal/h", "allowed http");
    assert.throws(() => validateSink("http://hooks.internal/h", false), /https/, "http elsewhere refused");
    assert.throws(() => validateSink("/relative", false), /absolute/, "relative refused");
    assert.throws(() => validateSink(`https://x.example.com/${"a".repeat(3000)}`, false), /2048/, "too long");
  });
});

describe("events configuration", () => {
  it("reads the WHARF_EVENTS_* variables and refuses a lease shorter than two attempts", () => {
    const config = loadConfig(
      {},
      {
        WHARF_EVENTS_MAX_ATTEMPTS: "5",
        WHARF_EVENTS_TIMEOUT: "2s",
        WHARF_EVENTS_LEASE: "1m",
        WHARF_EVENTS_RETENTION: "7d",
      },
    );
    assert.deepEqual(
      config.events,
      {
        allowHttp: false,
        sinkAllow: [],
        allowLoopback: false,
        maxAttempts: 5,
        timeoutMs: 2000,
        leaseMs: 60_000,
        retentionMs: 7 * 24 * 3600_000,
      },
      "parsed",
    );
    assert.equal(loadConfig({}).events.retentionMs, 30 * 24 * 3600_000, "events are kept 30 days by default");
    assert.throws(() => loadConfig({ eventsRetention: "0s" }), ConfigError, "no zero retention");
    assert.throws(() => loadConfig({ eventsRetention: "a month" }), ConfigError, "not a duration");
    assert.throws(
      () => loadConfig({ eventsLease: "10s", eventsTimeout: "10s" }),
      ConfigError,
      "lease too short",
    );
    assert.throws(() => loadConfig({ eventsMaxAttempts: "0" }), ConfigError, "zero attempts");
    assert.throws(() => loadConfig({ eventsAllowHttp: "maybe" }), ConfigError, "not a boolean");
  });
});

describe("webhook sender", () => {
  it("2xx is success, other statuses and a sink that never answers are failures within the time limit", async () => {
    const receiver = await startWebhookReceiver();
    const sender = createWebhookSender("wharf-test", LOOPBACK_ALLOWED);
    try {
      const ok = await sender.send(receiver.url(), { "ce-id": "1" }, "{}", 2000);
      assert.deepEqual(ok, { ok: true, status: 200, error: "" }, "2xx");
      receiver.respondWith(503);
      const refused = await sender.send(receiver.url(), { "ce-id": "2" }, "{}", 2000);
      assert.deepEqual(refused, { ok: false, status: 503, error: "sink answered HTTP 503" }, "5xx");
      receiver.respondWith("hang");
      const started = Date.now();
      const hung = await sender.send(receiver.url(), { "ce-id": "3" }, "{}", 300);
      const took = Date.now() - started;
      assert.equal(hung.ok, false, "a hung sink fails");
      assert.equal(hung.status, 0, "without a status");
      assert.match(hung.error, /timed out/, "saying it timed out");
      assert.ok(took >= 250 && took < 5000, `after about the time limit (${took} ms)`);
      assert.equal(receiver.received.at(-1)?.headers["user-agent"], "wharf-test", "user agent sent");
      receiver.respondWith(301);
      const moved = await sender.send(receiver.url(), { "ce-id": "4" }, "{}", 2000);
      assert.deepEqual(moved, { ok: false, status: 301, error: "sink answered HTTP 301" }, "not followed");
    } finally {
      sender.close();
      await receiver.close();
    }
  });

  it("an aborted signal ends an attempt at once, in flight or before it starts", async () => {
    const receiver = await startWebhookReceiver();
    const sender = createWebhookSender("wharf-test", LOOPBACK_ALLOWED);
    try {
      receiver.respondWith("hang");
      const controller = new AbortController();
      const started = performance.now();
      const sending = sender.send(receiver.url(), { "ce-id": "1" }, "{}", 30_000, controller.signal);
      while (receiver.received.length === 0) await new Promise((r) => setTimeout(r, 10));
      controller.abort();
      const aborted = await sending;
      assert.deepEqual(aborted, { ok: false, status: 0, error: "aborted" }, "in flight");
      assert.ok(performance.now() - started < 10_000, "long before the time limit");
      const before = await sender.send(receiver.url(), { "ce-id": "2" }, "{}", 30_000, controller.signal);
      assert.deepEqual(before, { ok: false, status: 0, error: "aborted" }, "already aborted");
      assert.equal(receiver.received.length, 1, "an attempt with an aborted signal sends nothing");
    } finally {
      sender.close();
      await receiver.close();
    }
  });

  it("a sink nobody listens on fails with the connection error", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const sender = createWebhookSender("wharf-test", LOOPBACK_ALLOWED);
    try {
      const refused = await sender.send(`http://127.0.0.1:${port}/hook`, { "ce-id": "1" }, "{}", 2000);
      assert.equal(refused.ok, false, "fails");
      assert.equal(refused.status, 0, "without a status");
      assert.match(refused.error, /ECONNREFUSED/, `names the refusal (${refused.error})`);
    } finally {
      sender.close();
    }
  });
});
