import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createVerifiedTokenCache } from "../../../src/auth/verified-token-cache.js";

describe("verified token cache", () => {
  it("serves an entry until its own expiry", () => {
    const cache = createVerifiedTokenCache<string>(10);
    cache.set("t", "v", 1000, 0);
    assert.equal(cache.get("t", 999), "v");
    assert.equal(cache.get("t", 1000), undefined);
    assert.equal(cache.size, 0, "the expired entry is dropped");
  });

  it("ignores entries that are already expired", () => {
    const cache = createVerifiedTokenCache<string>(10);
    cache.set("t", "v", 5, 5);
    assert.equal(cache.size, 0);
  });

  it("drops expired entries first, then the oldest, when full", () => {
    const cache = createVerifiedTokenCache<string>(10);
    for (let i = 0; i < 10; i++) cache.set(`t${i}`, "v", i === 3 ? 50 : 1000, 0);
    cache.set("new", "v", 1000, 100);
    assert.equal(cache.get("t3", 100), undefined);
    assert.equal(cache.get("t0", 100), "v", "an expired entry made room; nothing else was evicted");
    assert.equal(cache.size, 10);
    cache.set("newer", "v", 1000, 100);
    assert.ok(cache.size <= 10);
    assert.equal(cache.get("t0", 100), undefined, "the oldest goes");
    assert.equal(cache.get("newer", 100), "v");
  });
});
