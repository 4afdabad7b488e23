import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createCountCache } from "../../../../src/storage/sql/count-cache.js";

describe("createCountCache", () => {
  it("serves a total until the TTL passes", () => {
    let now = 1000;
    const cache = createCountCache(100, () => now);
    cache.set("repos", "q", cache.generation("repos"), 7n);
    assert.equal(cache.get("repos", "q"), 7n);
    now += 99;
    assert.equal(cache.get("repos", "q"), 7n);
    now += 1;
    assert.equal(cache.get("repos", "q"), undefined);
  });

  it("stops serving a table's totals when it is written, and only that table's", () => {
    const cache = createCountCache(10_000);
    cache.set("repos", "q", cache.generation("repos"), 7n);
    cache.set("tags", "q", cache.generation("tags"), 3n);
    cache.invalidate(["repos"]);
    assert.equal(cache.get("repos", "q"), undefined);
    assert.equal(cache.get("tags", "q"), 3n);
  });

  it("never stores a count that raced a write", () => {
    const cache = createCountCache(10_000);
    const generation = cache.generation("repos");
    cache.invalidate(["repos"]); // a write lands while the count runs
    cache.set("repos", "q", generation, 7n);
    assert.equal(cache.get("repos", "q"), undefined);
  });

  it("keys entries by query", () => {
    const cache = createCountCache(10_000);
    cache.set("repos", "a", 0, 1n);
    cache.set("repos", "b", 0, 2n);
    assert.equal(cache.get("repos", "a"), 1n);
    assert.equal(cache.get("repos", "b"), 2n);
  });

  it("caches nothing with a TTL of 0", () => {
    const cache = createCountCache(0);
    cache.set("repos", "q", 0, 7n);
    assert.equal(cache.get("repos", "q"), undefined);
  });

  it("invalidateAll drops every table's totals (changes may have been missed)", () => {
    const cache = createCountCache(60_000, () => 0);
    cache.set("repos", "q", cache.generation("repos"), 7n);
    cache.set("tags", "q", cache.generation("tags"), 3n);
    cache.invalidateAll();
    assert.equal(cache.get("repos", "q"), undefined);
    assert.equal(cache.get("tags", "q"), undefined);
    cache.set("repos", "q", cache.generation("repos"), 8n);
    assert.equal(cache.get("repos", "q"), 8n, "counted after it: served");
  });

  it("serves a large total across writes to its table until the large TTL passes (ADR 0044)", () => {
    let now = 0;
    const cache = createCountCache(1000, () => now, { minTotal: 100, ttlMs: 30_000 });
    cache.set("tags", "large", cache.generation("tags"), 100n);
    cache.set("tags", "small", cache.generation("tags"), 99n);
    cache.invalidate(["tags"]); // a tag push in this process
    assert.equal(cache.get("tags", "small"), undefined, "a small total stays exact");
    assert.equal(cache.get("tags", "large"), 100n, "a large total may lag the write");
    now = 29_999;
    assert.equal(cache.get("tags", "large"), 100n);
    now = 30_000;
    assert.equal(cache.get("tags", "large"), undefined, "for at most the large TTL");
  });

  it("drops large totals on invalidateAll, never stores one that raced a write, and caches none with a TTL of 0", () => {
    const cache = createCountCache(1000, () => 0, { minTotal: 100, ttlMs: 30_000 });
    cache.set("tags", "q", cache.generation("tags"), 500n);
    cache.invalidateAll();
    assert.equal(cache.get("tags", "q"), undefined);
    const generation = cache.generation("tags");
    cache.invalidate(["tags"]);
    cache.set("tags", "q", generation, 500n);
    assert.equal(cache.get("tags", "q"), undefined);
    const off = createCountCache(0, () => 0, { minTotal: 100, ttlMs: 30_000 });
    off.set("tags", "q", off.generation("tags"), 500n);
    assert.equal(off.get("tags", "q"), undefined);
  });
});
