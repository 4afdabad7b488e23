import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { SigningKeyRow } from "../../../src/storage/auth-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { T0 } from "./fixtures.js";

/** SigningKeyStore and SettingsStore, including putIfAbsent raced across store handles. */
export function keysAndSettingsCases(db: TestDatabase): void {
  describe("signing keys and settings", () => {
    let store: Store;
    before(async () => {
      store = await db.openFresh();
    });

    it("lists signing keys oldest first; inserting an existing kid changes nothing", async () => {
      const newer: SigningKeyRow = { kid: "k-a", privateJwk: "{1}", publicJwk: "{p1}", createTime: T0 + 2 };
      const older: SigningKeyRow = {
        kid: "k-b",
        privateJwk: "{2}",
        publicJwk: "{p2}",
        createTime: T0 + 1,
        retireTime: T0 + 100,
      };
      assert.deepEqual(await store.signingKeys.list(), []);
      await store.signingKeys.insert(newer);
      await store.signingKeys.insert(older);
      await store.signingKeys.insert({ ...newer, privateJwk: "{changed}", createTime: T0 });
      const keys = await store.signingKeys.list();
      assert.deepEqual(keys, [older, newer]);
      assert.ok(!("retireTime" in (keys[1] ?? {})), "an absent retireTime stays absent");
    });

    it("retireOthers marks the older keys without a retire time, never the named or a newer one", async () => {
      const keys = (await db.openFresh()).signingKeys;
      const row = (kid: string, createTime: number, retireTime?: number): SigningKeyRow =>
        retireTime === undefined
          ? { kid, privateJwk: "{}", publicJwk: "{}", createTime }
          : { kid, privateJwk: "{}", publicJwk: "{}", createTime, retireTime };
      await keys.insert(row("old", T0));
      await keys.insert(row("already", T0, T0 + 50));
      await keys.insert(row("a-tie", T0 + 10));
      await keys.insert(row("z-tie", T0 + 10));
      await keys.insert(row("m-new", T0 + 10));
      await keys.insert(row("newer", T0 + 20));
      assert.equal(await keys.retireOthers("m-new", T0 + 10, T0 + 999), 2);
      const retire = Object.fromEntries((await keys.list()).map((k) => [k.kid, k.retireTime]));
      assert.deepEqual(retire, {
        old: T0 + 999,
        already: T0 + 50,
        "a-tie": T0 + 999,
        "z-tie": undefined,
        "m-new": undefined,
        newer: undefined,
      });
    });

    it("settings: put replaces a value, last writer wins", async () => {
      await store.settings.put("public-url", "http://a");
      assert.equal(await store.settings.get("public-url"), "http://a");
      await store.settings.put("public-url", "http://b");
      assert.equal(await store.settings.get("public-url"), "http://b");
      assert.equal(await store.settings.putIfAbsent("public-url", "http://c"), "http://b");
    });

    it("settings: get of a missing key, putIfAbsent keeps the first value", async () => {
      assert.equal(await store.settings.get("page-token-secret"), undefined);
      assert.equal(await store.settings.putIfAbsent("page-token-secret", "first"), "first");
      assert.equal(await store.settings.putIfAbsent("page-token-secret", "second"), "first");
      assert.equal(await store.settings.get("page-token-secret"), "first");
    });

    it("putIfAbsent raced from several handles agrees on one value", async () => {
      // Separate handles (separate connections/pools) on one database, as separate processes would be.
      // The database is made and migrated first, as a running server's is: the race is putIfAbsent's.
      await db.open();
      const racers = await Promise.all([db.open(), db.open(), db.open(), db.open()]);
      for (let round = 0; round < 5; round++) {
        const key = `race-${round}`;
        const values = await Promise.all(
          racers.flatMap((s, i) => [
            s.settings.putIfAbsent(key, `v${i}a`),
            s.settings.putIfAbsent(key, `v${i}b`),
          ]),
        );
        const winner = values[0];
        assert.ok(winner !== undefined && /^v\d[ab]$/.test(winner));
        assert.deepEqual(new Set(values), new Set([winner]), `every racer sees the winner of ${key}`);
        for (const s of racers) assert.equal(await s.settings.get(key), winner);
      }
    });
  });
}
