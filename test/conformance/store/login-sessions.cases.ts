import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { T0 } from "./fixtures.js";

/** LoginSessionStore: take-once semantics, kind and expiry checks, purge. */
export function loginSessionCases(db: TestDatabase): void {
  describe("login sessions", () => {
    let store: Store;
    before(async () => {
      store = await db.openFresh();
    });

    it("a row is taken once, only with its kind, only before it expires", async () => {
      await store.loginSessions.put({ id: "h1", kind: "code", data: '{"a":1}', expireTime: T0 + 100 });
      await assert.rejects(
        store.loginSessions.put({ id: "h1", kind: "code", data: "{}", expireTime: T0 + 100 }),
        (err: Error & { code?: number }) => err.code === 6,
        "a duplicate id is ALREADY_EXISTS",
      );
      assert.equal(await store.loginSessions.take("h1", "authorization", T0), undefined, "wrong kind");
      assert.equal(await store.loginSessions.take("h1", "code", T0), '{"a":1}', "first take gets the data");
      assert.equal(await store.loginSessions.take("h1", "code", T0), undefined, "second take gets nothing");

      await store.loginSessions.put({ id: "h2", kind: "code", data: "{}", expireTime: T0 + 100 });
      assert.equal(
        await store.loginSessions.take("h2", "code", T0 + 100),
        undefined,
        "expired at expireTime",
      );
      await store.loginSessions.put({ id: "h2", kind: "code", data: "{}", expireTime: T0 + 200 });
      assert.equal(
        await store.loginSessions.take("h2", "code", T0 + 1),
        "{}",
        "the expired take deleted the row",
      );
    });

    it("concurrent takers: exactly one gets the row", async () => {
      await store.loginSessions.put({ id: "race", kind: "code", data: "won", expireTime: T0 + 100 });
      const results = await Promise.all(
        Array.from({ length: 8 }, () => store.loginSessions.take("race", "code", T0)),
      );
      assert.deepEqual(
        results.filter((r) => r !== undefined),
        ["won"],
        "one taker wins",
      );
    });

    it("purgeExpired removes only expired rows", async () => {
      await store.loginSessions.put({ id: "old", kind: "authorization", data: "{}", expireTime: T0 + 10 });
      await store.loginSessions.put({ id: "new", kind: "authorization", data: "{}", expireTime: T0 + 1000 });
      assert.ok((await store.loginSessions.purgeExpired(T0 + 10)) >= 1, "the expired row is purged");
      assert.equal(await store.loginSessions.take("old", "authorization", T0), undefined, "gone");
      assert.equal(await store.loginSessions.take("new", "authorization", T0), "{}", "kept");
    });
  });
}
