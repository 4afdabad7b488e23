import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { isDomainError } from "../../../src/core/errors.js";
import { newChildUid } from "../../../src/core/uidp.js";
import type { IdentityRow } from "../../../src/storage/iam-store.js";
import type { RefreshTokenRow } from "../../../src/storage/refresh-token-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { groupRow, T0 } from "./fixtures.js";

const DAY = 24 * 60 * 60 * 1000;

function identityRow(parent: string, name: string): IdentityRow {
  return { uid: newChildUid(parent), name, description: "", email: "", createTime: T0, updateTime: T0 };
}

function tokenRow(identityUid: string, hash: string, family: string, extra: Partial<RefreshTokenRow> = {}) {
  const row: RefreshTokenRow = {
    tokenHash: hash.padEnd(64, "0"),
    familyUid: family,
    identityUid,
    audience: ["https://api.example"],
    createTime: T0,
    expireTime: T0 + 30 * DAY,
    ...extra,
  };
  return row;
}

/** RefreshTokenStore: round trip, single-winner spend, family revocation, identity cascade, purge, lastSeen marks. */
export function refreshTokenCases(db: TestDatabase): void {
  describe("refresh tokens", () => {
    let store: Store;
    let alice: IdentityRow;
    before(async () => {
      store = await db.openFresh();
      const org = groupRow("", "rt-org");
      await store.groups.insert(org);
      alice = identityRow(org.uid, "alice");
      await store.identities.insert(alice);
    });

    it("round-trips every field, optional ones staying absent", async () => {
      const full = tokenRow(alice.uid, "a1", "fam-a", {
        audience: ["https://api.example", "https://registry.example"],
        scopes: [`${alice.uid.split("/")[0]}`],
        caps: ["repo.list", "groups.list"],
        act: { iss: "https://idp.example", sub: "ci", aud: ["x"] },
      });
      const bare = tokenRow(alice.uid, "a2", "fam-b");
      await store.refreshTokens.insert(full);
      await store.refreshTokens.insert(bare);
      assert.deepEqual(await store.refreshTokens.get(full.tokenHash), full);
      const got = await store.refreshTokens.get(bare.tokenHash);
      assert.deepEqual(got, bare);
      for (const field of ["scopes", "caps", "act", "spentTime"]) {
        assert.equal(field in (got ?? {}), false, `${field} stays absent`);
      }
      assert.equal(await store.refreshTokens.get("f".repeat(64)), undefined, "unknown hash");
    });

    it("a duplicate hash is ALREADY_EXISTS; an unknown identity is NOT_FOUND", async () => {
      const row = tokenRow(alice.uid, "b1", "fam-c");
      await store.refreshTokens.insert(row);
      await assert.rejects(store.refreshTokens.insert(row), (err) => {
        assert.ok(isDomainError(err) && err.code === Code.AlreadyExists, `ALREADY_EXISTS, got ${err}`);
        return true;
      });
      const ghost = tokenRow(`${alice.uid.split("/")[0]}/0123456789abcdef`, "b2", "fam-c");
      await assert.rejects(store.refreshTokens.insert(ghost), (err) => {
        assert.ok(isDomainError(err) && err.code === Code.NotFound, `NOT_FOUND, got ${err}`);
        return true;
      });
    });

    it("spend succeeds once, even raced; the row then records when", async () => {
      const row = tokenRow(alice.uid, "c1", "fam-d");
      await store.refreshTokens.insert(row);
      const results = await Promise.all(
        [1, 2, 3, 4].map((i) => store.refreshTokens.spend(row.tokenHash, T0 + i)),
      );
      assert.equal(results.filter(Boolean).length, 1, "exactly one spender wins");
      const spent = await store.refreshTokens.get(row.tokenHash);
      assert.ok(spent?.spentTime !== undefined && spent.spentTime > T0, "spentTime is set");
      assert.equal(await store.refreshTokens.spend(row.tokenHash, T0 + 9), false, "already spent");
      assert.equal(await store.refreshTokens.spend("e".repeat(64), T0), false, "unknown hash");
    });

    it("revokeFamily deletes the whole family and nothing else", async () => {
      const f1 = tokenRow(alice.uid, "d1", "fam-e");
      const f2 = tokenRow(alice.uid, "d2", "fam-e", { spentTime: T0 + 5 });
      const other = tokenRow(alice.uid, "d3", "fam-f");
      for (const r of [f1, f2, other]) await store.refreshTokens.insert(r);
      assert.equal(await store.refreshTokens.revokeFamily("fam-e"), 2);
      assert.equal(await store.refreshTokens.get(f1.tokenHash), undefined);
      assert.equal(await store.refreshTokens.get(f2.tokenHash), undefined);
      assert.deepEqual(await store.refreshTokens.get(other.tokenHash), other);
    });

    it("deleting the identity deletes its refresh tokens", async () => {
      const org = groupRow("", "rt-cascade");
      await store.groups.insert(org);
      const bob = identityRow(org.uid, "bob");
      await store.identities.insert(bob);
      const row = tokenRow(bob.uid, "e1", "fam-g");
      await store.refreshTokens.insert(row);
      assert.ok(await store.identities.delete(bob.uid), "identity deleted");
      assert.equal(await store.refreshTokens.get(row.tokenHash), undefined, "token went with it");
    });

    it("deleteExpired removes tokens expired at or before now", async () => {
      const old = tokenRow(alice.uid, "f1", "fam-h", { expireTime: T0 + 10 });
      const edge = tokenRow(alice.uid, "f2", "fam-h", { expireTime: T0 + 20 });
      const live = tokenRow(alice.uid, "f3", "fam-h", { expireTime: T0 + 21 });
      for (const r of [old, edge, live]) await store.refreshTokens.insert(r);
      assert.ok((await store.refreshTokens.deleteExpired(T0 + 20)) >= 2, "both expired rows deleted");
      assert.equal(await store.refreshTokens.get(old.tokenHash), undefined);
      assert.equal(await store.refreshTokens.get(edge.tokenHash), undefined);
      assert.deepEqual(await store.refreshTokens.get(live.tokenHash), live);
    });

    it("markIdentitySeen writes at most once per interval", async () => {
      const org = groupRow("", "rt-seen");
      await store.groups.insert(org);
      const carol = identityRow(org.uid, "carol");
      await store.identities.insert(carol);
      assert.equal(await store.refreshTokens.markIdentitySeen(carol.uid, T0 + 1000, 60_000), true);
      assert.equal((await store.identities.get(carol.uid))?.lastSeenTime, T0 + 1000);
      assert.equal(await store.refreshTokens.markIdentitySeen(carol.uid, T0 + 30_000, 60_000), false);
      assert.equal((await store.identities.get(carol.uid))?.lastSeenTime, T0 + 1000, "throttled");
      assert.equal(await store.refreshTokens.markIdentitySeen(carol.uid, T0 + 61_000, 60_000), true);
      assert.equal((await store.identities.get(carol.uid))?.lastSeenTime, T0 + 61_000);
      assert.equal(await store.refreshTokens.markIdentitySeen(`${org.uid}/0123456789abcdef`, T0, 0), false);
    });
  });
}
