import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../config/config.js";
import { backoffDelay } from "./event-dispatcher.js";
import { validateSink } from "./sink-url.js";

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
      { WHARF_EVENTS_MAX_ATTEMPTS: "5", WHARF_EVENTS_TIMEOUT: "2s", WHARF_EVENTS_LEASE: "1m" },
    );
    assert.deepEqual(
      config.events,
      { allowHttp: false, maxAttempts: 5, timeoutMs: 2000, leaseMs: 60_000 },
      "parsed",
    );
    assert.throws(
      () => loadConfig({ eventsLease: "10s", eventsTimeout: "10s" }),
      ConfigError,
      "lease too short",
    );
    assert.throws(() => loadConfig({ eventsMaxAttempts: "0" }), ConfigError, "zero attempts");
    assert.throws(() => loadConfig({ eventsAllowHttp: "maybe" }), ConfigError, "not a boolean");
  });
});
