import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { newChildUid } from "../../../src/core/uidp.js";
import type { Store } from "../../../src/storage/store.js";
import type { TrustedKeyRow } from "../../../src/storage/trusted-key-store.js";
import type { TestDatabase } from "../../support/databases.js";
import { assertAlreadyExists, firstPage, groupRow, repoRow, sortedUids, T0 } from "./fixtures.js";

function keyRow(parentUid: string, name: string, time = T0): TrustedKeyRow {
  return {
    uid: newChildUid(parentUid),
    parentUid,
    name,
    publicKeyPem: `-----BEGIN PUBLIC KEY-----\n${name}\n-----END PUBLIC KEY-----\n`,
    algorithm: "ECDSA_P256",
    fingerprint: "ab".repeat(32),
    createTime: time,
  };
}

/**
 * TrustedKeyStore (migration 0023): rows round-trip, names are unique per parent, the lookup by a
 * repo's ancestors in precedence order, lists by subtree and name, and keys going with their group
 * or repo.
 */
export function trustedKeyCases(db: TestDatabase): void {
  describe("trusted keys", () => {
    let store: Store;
    let org: string;
    let folder: string;

    before(async () => {
      store = await db.openFresh();
      const o = groupRow("", "tk-org");
      await store.groups.insert(o);
      org = o.uid;
      const f = groupRow(org, "tk-folder");
      await store.groups.insert(f);
      folder = f.uid;
    });

    it("stores, reads and deletes a key", async () => {
      const row = keyRow(org, "release");
      await store.trustedKeys.insert(row);
      assert.deepEqual(await store.trustedKeys.get(row.uid), row);
      assert.equal(await store.trustedKeys.delete(row.uid), true);
      assert.equal(await store.trustedKeys.get(row.uid), undefined);
      assert.equal(await store.trustedKeys.delete(row.uid), false);
    });

    it("refuses a second key of the same name under one parent as ALREADY_EXISTS", async () => {
      await store.trustedKeys.insert(keyRow(org, "dup"));
      await assertAlreadyExists(store.trustedKeys.insert(keyRow(org, "dup")));
      await store.trustedKeys.insert(keyRow(folder, "dup"));
    });

    it("finds the keys of a repo and its ancestors, nearest first, then oldest first", async () => {
      const fresh = await db.openFresh();
      const o = groupRow("", "anc-org");
      await fresh.groups.insert(o);
      const f = groupRow(o.uid, "anc-folder");
      await fresh.groups.insert(f);
      const repo = repoRow(f.uid, "anc-app");
      await fresh.repos.insert(repo);
      const other = repoRow(f.uid, "anc-other");
      await fresh.repos.insert(other);
      const orgNew = keyRow(o.uid, "org-new", T0 + 2);
      const orgOld = keyRow(o.uid, "org-old", T0 + 1);
      const atFolder = keyRow(f.uid, "folder", T0 + 9);
      const atRepo = keyRow(repo.uid, "repo", T0 + 9);
      for (const row of [orgNew, orgOld, atFolder, atRepo, keyRow(other.uid, "other")]) {
        await fresh.trustedKeys.insert(row);
      }
      const found = await fresh.trustedKeys.ofParents([o.uid, f.uid, repo.uid]);
      assert.deepEqual(found, [atRepo, atFolder, orgOld, orgNew]);
      assert.deepEqual(await fresh.trustedKeys.ofParents([]), []);
    });

    it("lists by subtree, authorized scopes and name", async () => {
      const fresh = await db.openFresh();
      const a = groupRow("", "list-a");
      const b = groupRow("", "list-b");
      await fresh.groups.insert(a);
      await fresh.groups.insert(b);
      const f = groupRow(a.uid, "folder");
      await fresh.groups.insert(f);
      const a1 = keyRow(a.uid, "zeta", T0 + 1);
      const a2 = keyRow(a.uid, "alpha", T0 + 2);
      const f1 = keyRow(f.uid, "beta", T0 + 3);
      const b1 = keyRow(b.uid, "mid", T0 + 4);
      for (const row of [a1, a2, f1, b1]) await fresh.trustedKeys.insert(row);

      const ofA = await fresh.trustedKeys.list({ uidp: { childrenOf: a.uid } }, firstPage());
      assert.deepEqual(sortedUids(ofA.rows), sortedUids([a1, a2]));
      assert.equal(ofA.total, 2n);
      const underA = await fresh.trustedKeys.list({ uidp: { descendantsOf: a.uid } }, firstPage());
      assert.deepEqual(sortedUids(underA.rows), sortedUids([a1, a2, f1]));
      const byName = await fresh.trustedKeys.list({}, firstPage(100, "name"));
      assert.deepEqual(
        byName.rows.map((r) => r.name),
        ["alpha", "beta", "mid", "zeta"],
      );
      const byTime = await fresh.trustedKeys.list({}, firstPage(100, "create_time", true));
      assert.deepEqual(
        byTime.rows.map((r) => r.name),
        ["mid", "beta", "alpha", "zeta"],
      );
      const withinB = await fresh.trustedKeys.list({ within: { all: false, uids: [b.uid] } }, firstPage());
      assert.deepEqual(sortedUids(withinB.rows), [b1.uid]);
      const none = await fresh.trustedKeys.list({ within: { all: false, uids: [] } }, firstPage());
      assert.deepEqual(none.rows, []);
    });

    it("deletes a group's and a repo's keys with them", async () => {
      const lone = groupRow("", "tk-lone");
      await store.groups.insert(lone);
      const atGroup = keyRow(lone.uid, "k");
      await store.trustedKeys.insert(atGroup);
      const repo = repoRow(folder, "tk-app");
      await store.repos.insert(repo);
      const atRepo = keyRow(repo.uid, "k");
      await store.trustedKeys.insert(atRepo);
      const kept = keyRow(folder, "kept");
      await store.trustedKeys.insert(kept);

      assert.equal(await store.repos.delete(repo.uid), true);
      assert.equal(await store.trustedKeys.get(atRepo.uid), undefined);
      assert.equal(await store.groups.delete(lone.uid), true);
      assert.equal(await store.trustedKeys.get(atGroup.uid), undefined);
      assert.deepEqual(await store.trustedKeys.get(kept.uid), kept);
    });
  });
}
