import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  createRateLimitGate,
  DEFAULT_RETRY_AFTER_MS,
  retryAfterMs,
} from "../../../../src/registry/remote/rate-limit-gate.js";
import { RemoteError } from "../../../../src/registry/remote/remote-registry.js";

const NOW = Date.parse("2026-11-29T12:00:00Z");

describe("Retry-After", () => {
  it("reads delay seconds and HTTP dates; defaults to 60 s", () => {
    assert.equal(retryAfterMs("120", NOW), 120_000);
    assert.equal(retryAfterMs(" 0 ", NOW), 0);
    assert.equal(retryAfterMs("Sun, 29 Nov 2026 12:00:30 GMT", NOW), 30_000);
    assert.equal(retryAfterMs("Sun, 29 Nov 2026 11:00:00 GMT", NOW), 0, "a date past is no wait");
    assert.equal(retryAfterMs(undefined, NOW), DEFAULT_RETRY_AFTER_MS);
    assert.equal(retryAfterMs("soon", NOW), DEFAULT_RETRY_AFTER_MS);
    assert.equal(retryAfterMs("-5", NOW), DEFAULT_RETRY_AFTER_MS);
  });

  it("caps a hostile wait at one day", () => {
    assert.equal(retryAfterMs("999999999999", NOW), 24 * 3600 * 1000);
  });
});

describe("the rate-limit gate", () => {
  it("refuses every call until the wait has passed on the clock, then lets them through", () => {
    let now = NOW;
    const gate = createRateLimitGate({ now: () => now });
    gate.check("before");
    assert.equal(gate.close("10"), 10_000);
    now += 4_000;
    const err = assert.throws(
      () => gate.check("manifest app:v1 at https://r.example"),
      (e: unknown) => e instanceof RemoteError && e.kind === "rate-limited",
    );
    void err;
    try {
      gate.check("again");
    } catch (e) {
      assert.ok(e instanceof RemoteError);
      assert.equal(e.retryAfterMs, 6_000);
      assert.equal(e.status, 429);
      assert.match(e.message, /^again: not sent/);
    }
    now += 6_000;
    gate.check("after");
  });

  it("a shorter wait does not reopen a longer one", () => {
    let now = NOW;
    const gate = createRateLimitGate({ now: () => now });
    gate.close("60");
    gate.close("1");
    now += 2_000;
    assert.throws(() => gate.check("x"), RemoteError);
  });
});
