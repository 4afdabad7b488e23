import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRateLimit } from "../../../src/core/rate-limit-spec.js";
import { createTokenBuckets, rateLimitHeaders } from "../../../src/core/token-buckets.js";

/** A clock the test moves by hand. */
function manualClock(start = 1_700_000_000_000) {
  let now = start;
  return {
    now: () => now,
    advance(ms: number) {
      now += ms;
    },
    set(ms: number) {
      now = ms;
    },
  };
}

describe("token buckets", () => {
  it("let a burst through, count down, then refuse without taking a token", () => {
    const clock = manualClock();
    const buckets = createTokenBuckets(parseRateLimit("2/s,burst=4"), clock);
    const seen = [1, 2, 3, 4].map(() => buckets.take("a"));
    assert.deepEqual(
      seen.map((v) => [v.allowed, v.remaining]),
      [
        [true, 3],
        [true, 2],
        [true, 1],
        [true, 0],
      ],
    );
    // Each taken token comes back in 0.5 s: four are missing, so the bucket is full in 2 s.
    assert.equal(seen[3]!.resetSeconds, 2);
    assert.equal(seen[0]!.limit, 4);
    const refused = buckets.take("a");
    assert.equal(refused.allowed, false);
    assert.equal(refused.remaining, 0);
    assert.equal(refused.retryAfterSeconds, 1, "0.5 s to the next token, rounded up");
    assert.equal(refused.resetSeconds, 2, "a refusal took nothing");
    // A refusal took no token: 0.5 s later exactly one request goes through, not zero.
    clock.advance(500);
    const next = buckets.take("a");
    assert.equal(next.allowed, true);
    assert.equal(next.remaining, 0);
    assert.equal(buckets.take("a").allowed, false);
  });

  it("refill at the rate, never above the burst", () => {
    const clock = manualClock();
    const buckets = createTokenBuckets(parseRateLimit("10/s,burst=5"), clock);
    for (let i = 0; i < 5; i++) assert.equal(buckets.take("k").allowed, true);
    assert.equal(buckets.take("k").allowed, false);
    clock.advance(300); // three tokens back
    assert.deepEqual(
      [1, 2, 3, 4].map(() => buckets.take("k").allowed),
      [true, true, true, false],
    );
    clock.advance(60_000); // long idle: full again, but only the burst
    const first = buckets.take("k");
    assert.equal(first.remaining, 4);
    assert.equal(first.resetSeconds, 1, "0.1 s to refill one token, rounded up to 1");
  });

  it("keep each key's bucket apart", () => {
    const clock = manualClock();
    const buckets = createTokenBuckets(parseRateLimit("1/m,burst=1"), clock);
    assert.equal(buckets.take("id:alice").allowed, true);
    assert.equal(buckets.take("id:alice").allowed, false);
    const bob = buckets.take("id:bob");
    assert.equal(bob.allowed, true);
    assert.equal(bob.remaining, 0);
  });

  it("say Retry-After in whole seconds, rounded up, at least 1", () => {
    const clock = manualClock();
    const slow = createTokenBuckets(parseRateLimit("1/m,burst=2"), clock);
    slow.take("k");
    slow.take("k");
    assert.equal(slow.take("k").retryAfterSeconds, 60);
    clock.advance(59_001);
    assert.equal(slow.take("k").retryAfterSeconds, 1, "0.999 s left rounds up to 1");
    clock.advance(999);
    assert.equal(slow.take("k").allowed, true);
    // Fractional intervals (3/s: 333.3 ms) do not drift into an extra or a missing token.
    const thirds = createTokenBuckets(parseRateLimit("3/s,burst=3"), clock);
    for (let round = 0; round < 100; round++) {
      for (let i = 0; i < 3; i++) assert.equal(thirds.take("t").allowed, true, `round ${round} #${i}`);
      assert.equal(thirds.take("t").allowed, false, `round ${round}`);
      clock.advance(1000);
    }
  });

  it("let a clock stepped back cost one refill at most, never the step", () => {
    const clock = manualClock();
    const buckets = createTokenBuckets(parseRateLimit("1/s,burst=2"), clock);
    buckets.take("k");
    buckets.take("k");
    clock.advance(-3_600_000);
    const refused = buckets.take("k");
    assert.equal(refused.allowed, false);
    assert.equal(refused.retryAfterSeconds, 1);
    clock.advance(1000);
    assert.equal(buckets.take("k").allowed, true, "an hour back did not cost an hour");
  });

  it("hold at most maxKeys buckets: full ones go first, then the least recently charged", () => {
    const clock = manualClock();
    const buckets = createTokenBuckets(parseRateLimit("1/s,burst=2"), clock, 100);
    for (let i = 0; i < 10_000; i++) {
      buckets.take(`ip:10.0.${i >> 8}.${i & 255}`);
      assert.ok(buckets.size <= 100, `size ${buckets.size} after ${i + 1} keys`);
    }
    // Full buckets are dropped before any other: a key drained just now keeps its state while
    // the idle ones (full again) make room.
    const fresh = manualClock();
    const kept = createTokenBuckets(parseRateLimit("1/m,burst=1"), fresh, 10);
    for (let i = 0; i < 9; i++) kept.take(`idle-${i}`);
    fresh.advance(120_000); // the nine are full again
    kept.take("busy");
    assert.equal(kept.take("busy").allowed, false);
    for (let i = 0; i < 8; i++) kept.take(`new-${i}`); // the first finds 10 held: the 9 full ones go
    assert.equal(kept.size, 9);
    assert.equal(kept.take("busy").allowed, false, "the drained bucket was not forgotten");
    // With no full bucket left, the least recently charged go: busy (then starting full again).
    for (let i = 8; i < 10; i++) kept.take(`new-${i}`);
    assert.ok(kept.size <= 10);
    assert.equal(kept.take("busy").allowed, true);
  });

  it("refuse a nonsensical bound", () => {
    assert.throws(() => createTokenBuckets(parseRateLimit("1/s"), manualClock(), 0), RangeError);
  });
});

describe("rateLimitHeaders", () => {
  it("name the limit, what remains and the reset; Retry-After only on a refusal", () => {
    const allowed = { allowed: true, limit: 100, remaining: 99, resetSeconds: 1, retryAfterSeconds: 0 };
    assert.deepEqual(rateLimitHeaders(allowed), {
      "ratelimit-limit": "100",
      "ratelimit-remaining": "99",
      "ratelimit-reset": "1",
    });
    const refused = { allowed: false, limit: 100, remaining: 0, resetSeconds: 2, retryAfterSeconds: 1 };
    assert.equal(rateLimitHeaders(refused)["retry-after"], "1");
  });
});
