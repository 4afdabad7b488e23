import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { newChildUid, newRootUid } from "../../../src/core/uidp.js";
import type { IdentityRow } from "../../../src/storage/iam-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { assertAlreadyExists, firstPage, groupRow, sortedUids, T0 } from "./fixtures.js";

function identity(parent: string, name: string, extra: Partial<IdentityRow> = {}): IdentityRow {
  return {
    uid: parent === "" ? newRootUid() : newChildUid(parent),
    name,
    description: `identity ${name}`,
    email: `${name}@example.com`,
    createTime: T0,
    updateTime: T0,
    ...extra,
  };
}

/**
 * IdentityStore: CRUD, JSON relationships round-trip, optional fields, relationship and name
 * filters, and the reference/delete locks that keep a role binding from outliving its identity.
 */
export function identityCases(db: TestDatabase): void {
  describe("identities", () => {
    let store: Store;
    before(async () => {
      store = await db.openFresh();
    });

    it("round-trips claimMatch, staticKeys and lastSeenTime exactly", async () => {
      const org = groupRow("", "ident-org");
      await store.groups.insert(org);
      const matcher = identity(org.uid, "ci", {
        claimMatch: {
          issuer: "https://token.actions.githubusercontent.com",
          subjectPattern: "repo:acme/.*",
          claims: { repository_owner: "acme" },
          claimPatterns: { ref: "refs/heads/.*" },
        },
        lastSeenTime: T0 + 42,
      });
      const keyed = identity(org.uid, "keys", {
        staticKeys: {
          issuer: "https://issuer.example",
          subject: "bot",
          issuerKeys: '{"keys":[]}',
          expirationTime: T0 + 1000,
          audiences: ["a", "b"],
        },
      });
      const plain = identity("", "person");
      for (const row of [matcher, keyed, plain]) await store.identities.insert(row);

      assert.deepEqual(await store.identities.get(matcher.uid), matcher);
      assert.deepEqual(await store.identities.get(keyed.uid), keyed);
      const stored = await store.identities.get(plain.uid);
      assert.deepEqual(stored, plain);
      assert.ok(
        stored && !("claimMatch" in stored) && !("lastSeenTime" in stored),
        "absent fields stay absent",
      );
      assert.deepEqual(sortedUids(await store.identities.getMany([matcher.uid, plain.uid, newRootUid()])), [
        ...sortedUids([matcher, plain]),
      ]);
    });

    it("updates every field but createTime, clearing removed relationships", async () => {
      const row = identity("", "changing", {
        claimMatch: { issuer: "https://a", subject: "x" },
        lastSeenTime: T0 + 1,
      });
      await store.identities.insert(row);
      const changed: IdentityRow = {
        uid: row.uid,
        name: "changed",
        description: "new",
        email: "new@example.com",
        staticKeys: { issuer: "https://b", subject: "y", issuerKeys: "{}" },
        createTime: T0 + 500,
        updateTime: T0 + 600,
      };
      assert.equal(await store.identities.update(changed), true);
      assert.deepEqual(await store.identities.get(row.uid), { ...changed, createTime: T0 });
      assert.equal(await store.identities.update(identity("", "ghost")), false);
    });

    it("deletes", async () => {
      const row = identity("", "doomed");
      await store.identities.insert(row);
      assert.equal(await store.identities.delete(row.uid), true);
      assert.equal(await store.identities.get(row.uid), undefined);
      assert.equal(await store.identities.delete(row.uid), false);
    });

    it("lockForReference and lockForDelete read the row, or undefined when it is gone", async () => {
      const row = identity("", "lockable");
      await store.identities.insert(row);
      assert.deepEqual(await store.transaction((tx) => tx.identities.lockForReference(row.uid)), row);
      assert.deepEqual(await store.transaction((tx) => tx.identities.lockForDelete(row.uid)), row);
      assert.equal(await store.transaction((tx) => tx.identities.lockForDelete(newRootUid())), undefined);
      assert.equal(await store.identities.lockForReference(newRootUid()), undefined, "outside a transaction");
    });

    it("a delete check waits for a reference being written, and then sees it", async () => {
      const org = groupRow("", "lock-ref-first");
      await store.groups.insert(org);
      const row = identity(org.uid, "bound-meanwhile");
      await store.identities.insert(row);
      const binding = {
        uid: newChildUid(org.uid),
        groupUid: org.uid,
        identityUid: row.uid,
        roleUid: newRootUid(),
        createTime: T0,
        updateTime: T0,
      };
      const referenced = signal();
      const commitReference = signal();
      const binder = store.transaction(async (tx) => {
        assert.ok(await tx.identities.lockForReference(row.uid));
        referenced.fire();
        await commitReference.fired;
        await tx.roleBindings.insert(binding);
      });
      await referenced.fired;
      let seen: number | undefined;
      const deleter = store.transaction(async (tx) => {
        assert.ok(await tx.identities.lockForDelete(row.uid), "the identity still exists");
        seen = await tx.roleBindings.countByIdentity(row.uid);
      });
      await sleep(150);
      assert.equal(seen, undefined, "the delete's check waits while the reference is being written");
      commitReference.fire();
      await Promise.all([binder, deleter]);
      assert.equal(seen, 1, "then it sees the binding that committed");
    });

    it("a reference waits for a delete in progress, and then finds no identity", async () => {
      const row = identity("", "deleted-meanwhile");
      await store.identities.insert(row);
      const locked = signal();
      const commitDelete = signal();
      const deleter = store.transaction(async (tx) => {
        assert.ok(await tx.identities.lockForDelete(row.uid));
        locked.fire();
        await commitDelete.fired;
        assert.equal(await tx.identities.delete(row.uid), true);
      });
      await locked.fired;
      let found: IdentityRow | undefined | "pending" = "pending";
      const binder = store.transaction(async (tx) => {
        found = await tx.identities.lockForReference(row.uid);
      });
      await sleep(150);
      assert.equal(found, "pending", "the reference waits while the delete is in progress");
      commitDelete.fire();
      await Promise.all([deleter, binder]);
      assert.equal(found, undefined, "then the identity is gone");
    });

    it("rejects a duplicate uid as ALREADY_EXISTS", async () => {
      const row = identity("", "twice");
      await store.identities.insert(row);
      await assertAlreadyExists(store.identities.insert({ ...row, name: "other" }));
    });

    it("filters by relationship and by name", async () => {
      const org = groupRow("", "rel-org");
      await store.groups.insert(org);
      const claim = identity(org.uid, "same", { claimMatch: { issuer: "https://i", subject: "s" } });
      const keys = identity(org.uid, "same", {
        staticKeys: { issuer: "https://i", subject: "t", issuerKeys: "{}" },
      });
      const none = identity(org.uid, "other");
      for (const row of [claim, keys, none]) await store.identities.insert(row);
      const scope = { uidp: { childrenOf: org.uid } };

      const byClaim = await store.identities.list({ ...scope, relationship: "claim_match" }, firstPage());
      assert.deepEqual(sortedUids(byClaim.rows), [claim.uid]);
      const byKeys = await store.identities.list({ ...scope, relationship: "static_keys" }, firstPage());
      assert.deepEqual(sortedUids(byKeys.rows), [keys.uid]);
      const byName = await store.identities.list({ ...scope, name: "same" }, firstPage());
      assert.deepEqual(sortedUids(byName.rows), sortedUids([claim, keys]));
      assert.equal(byName.total, 2n);
      const all = await store.identities.list(scope, firstPage());
      assert.equal(all.total, 3n);
    });
  });
}

/** A one-shot signal: `fired` resolves once `fire()` is called. */
function signal(): { fired: Promise<void>; fire: () => void } {
  let fire!: () => void;
  const fired = new Promise<void>((resolve) => {
    fire = resolve;
  });
  return { fired, fire };
}
