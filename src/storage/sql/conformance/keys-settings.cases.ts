import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { TestDatabase } from "../../../../test/support/databases.js";
import type { SigningKeyRow, Store } from "../../store.js";
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

    it("settings: get of a missing key, putIfAbsent keeps the first value", async () => {
      assert.equal(await store.settings.get("page-token-secret"), undefined);
      assert.equal(await store.settings.putIfAbsent("page-token-secret", "first"), "first");
      assert.equal(await store.settings.putIfAbsent("page-token-secret", "second"), "first");
      assert.equal(await store.settings.get("page-token-secret"), "first");
    });

    it("putIfAbsent raced from several handles agrees on one value", async () => {
      // Separate handles (separate connections/pools) on one database, as separate processes would be.
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
