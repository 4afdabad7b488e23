import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createGrantsCache } from "../../../src/authz/grants-cache.js";
import type { Grant } from "../../../src/storage/iam-store.js";

function fakeBindings() {
  const calls: string[] = [];
  let fail = false;
  return {
    calls,
    failNext: () => {
      fail = true;
    },
    roleBindings: {
      async grantsOf(identityUid: string): Promise<Grant[]> {
        calls.push(identityUid);
        if (fail) {
          fail = false;
          throw new Error("database down");
        }
        return [{ groupUid: "g", roleUid: "r", capabilities: [calls.length] }];
      },
    },
  };
}

describe("grants cache", () => {
  it("shares one query between concurrent callers and serves it until the ttl", async () => {
    let now = 0;
    const fake = fakeBindings();
    const cache = createGrantsCache({
      roleBindings: fake.roleBindings,
      clock: { now: () => now },
      ttlMs: 100,
    });
    const [a, b] = await Promise.all([cache.grantsOf("x"), cache.grantsOf("x")]);
    assert.equal(a, b);
    assert.deepEqual(fake.calls, ["x"]);
    now = 99;
    await cache.grantsOf("x");
    assert.equal(fake.calls.length, 1);
    now = 100;
    assert.deepEqual((await cache.grantsOf("x"))[0]?.capabilities, [2]);
    assert.equal(fake.calls.length, 2);
  });

  it("does not remember a failed query", async () => {
    const fake = fakeBindings();
    const cache = createGrantsCache({
      roleBindings: fake.roleBindings,
      clock: { now: () => 0 },
      ttlMs: 1000,
    });
    fake.failNext();
    await assert.rejects(cache.grantsOf("x"), /database down/);
    assert.equal((await cache.grantsOf("x")).length, 1);
    assert.equal(fake.calls.length, 2);
  });

  it("invalidates one identity or all, and stays within maxEntries", async () => {
    const fake = fakeBindings();
    const cache = createGrantsCache({
      roleBindings: fake.roleBindings,
      clock: { now: () => 0 },
      ttlMs: 1000,
      maxEntries: 2,
    });
    await cache.grantsOf("x");
    await cache.grantsOf("y");
    cache.invalidate("x");
    await cache.grantsOf("y");
    await cache.grantsOf("x");
    assert.deepEqual(fake.calls, ["x", "y", "x"]);
    cache.invalidate();
    await cache.grantsOf("y");
    assert.deepEqual(fake.calls, ["x", "y", "x", "y"]);
    await cache.grantsOf("z");
    await cache.grantsOf("x"); // full: evicts the oldest entry (y)
    await cache.grantsOf("z");
    assert.deepEqual(fake.calls, ["x", "y", "x", "y", "z", "x"]);
    await cache.grantsOf("y");
    assert.deepEqual(fake.calls, ["x", "y", "x", "y", "z", "x", "y"]);
  });
});
