import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  parseRateLimit,
  parseRegistryRateLimits,
  RateLimitSpecError,
} from "../../../src/core/rate-limit-spec.js";

const refuses = (parse: (spec: string) => unknown, spec: string, pattern: RegExp) =>
  assert.throws(
    () => parse(spec),
    (err: unknown) => err instanceof RateLimitSpecError && pattern.test(err.message),
    spec,
  );

describe("parseRateLimit", () => {
  it("reads <n>/<s|m|h> with an optional burst", () => {
    assert.deepEqual(parseRateLimit("50/s,burst=100"), { perSecond: 50, burst: 100, text: "50/s,burst=100" });
    assert.deepEqual(parseRateLimit(" 600/m , burst = 20 "), {
      perSecond: 10,
      burst: 20,
      text: "600/m,burst=20",
    });
    assert.deepEqual(parseRateLimit("3600/h"), { perSecond: 1, burst: 3600, text: "3600/h,burst=3600" });
    assert.equal(parseRateLimit("1/m").perSecond, 1 / 60);
  });

  it("refuses what is not a rate, with what is expected", () => {
    for (const bad of ["", "fast", "50", "50/d", "50/sec", "-5/s", "1.5/s", "/s", "50 / s"])
      refuses(
        parseRateLimit,
        bad,
        /is not a rate: write <requests>\/<s\|m\|h>\[,burst=<n>\], e\.g\. 50\/s,burst=100/,
      );
  });

  it("refuses counts and bursts outside 1 to a million", () => {
    refuses(parseRateLimit, "0/s", /the request count must be a whole number from 1 to 1000000 \(got "0"\)/);
    refuses(parseRateLimit, "1000001/s", /the request count must be a whole number from 1 to 1000000/);
    for (const bad of ["0", "-1", "1.5", "", "many", "2000000"])
      refuses(parseRateLimit, `5/s,burst=${bad}`, /burst must be a whole number from 1 to 1000000/);
    refuses(parseRateLimit, "5/s,burst", /burst must be a whole number/);
  });

  it("refuses unknown and repeated options", () => {
    refuses(parseRateLimit, "5/s,window=10", /unknown option "window": the only option is burst=<n>/);
    refuses(parseRateLimit, "5/s,burst=1,burst=2", /burst is given twice/);
    refuses(parseRateLimit, "5/s,", /unknown option ""/);
  });

  it("clips what it quotes", () => {
    assert.throws(
      () => parseRateLimit("x".repeat(500)),
      (err: unknown) => err instanceof Error && err.message.length < 200,
    );
  });
});

describe("parseRegistryRateLimits", () => {
  it("reads pull and push budgets, either alone", () => {
    const both = parseRegistryRateLimits("pull=50/s,burst=100;push=10/s,burst=20");
    assert.deepEqual(both.pull, { perSecond: 50, burst: 100, text: "50/s,burst=100" });
    assert.deepEqual(both.push, { perSecond: 10, burst: 20, text: "10/s,burst=20" });
    assert.deepEqual(parseRegistryRateLimits(" push = 1/s ; "), {
      push: { perSecond: 1, burst: 1, text: "1/s,burst=1" },
    });
    assert.equal(parseRegistryRateLimits("pull=5/m").push, undefined);
  });

  it("refuses unknown, repeated, empty and malformed budgets, naming the budget", () => {
    refuses(parseRegistryRateLimits, "", /no budget given: write pull=<limit>;push=<limit>/);
    refuses(parseRegistryRateLimits, ";", /no budget given/);
    refuses(
      parseRegistryRateLimits,
      "delete=1/s",
      /"delete" is not a budget: write pull=<limit> and\/or push=<limit>/,
    );
    refuses(parseRegistryRateLimits, "50/s,burst=100", /"50\/s,burst" is not a budget/);
    refuses(parseRegistryRateLimits, "pull=1/s;pull=2/s", /the pull budget is given twice/);
    refuses(parseRegistryRateLimits, "pull", /pull: missing "=<limit>"/);
    refuses(parseRegistryRateLimits, "push=fast", /^push: "fast" is not a rate/);
    refuses(parseRegistryRateLimits, "pull=5/s,burst=0", /^pull: burst must be a whole number/);
    // A comma where the semicolon belongs reads as an unknown option of the pull limit.
    refuses(parseRegistryRateLimits, "pull=5/s,push=1/s", /^pull: unknown option "push"/);
  });
});
