import assert from "node:assert/strict";
import { generateKeyPairSync } from "node:crypto";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Clock } from "../../../../../src/core/clock.js";
import { newChildUid, newRootUid } from "../../../../../src/core/uidp.js";
import { createTrustedKeyring } from "../../../../../src/registry/supply-chain/keys/trusted-keyring.js";
import { type ChangeBatch, createChangeHub } from "../../../../../src/storage/change-feed.js";
import type { Store } from "../../../../../src/storage/store.js";
import type { TrustedKeyRow } from "../../../../../src/storage/trusted-key-store.js";
import { forEachEngine } from "../../../../support/databases.js";

const T0 = 1_767_225_600_000;
const PEM = generateKeyPairSync("ed25519").publicKey.export({ type: "spki", format: "pem" }).toString();

function keyRow(parentUid: string, name: string, time = T0): TrustedKeyRow {
  return {
    uid: newChildUid(parentUid),
    parentUid,
    name,
    publicKeyPem: PEM,
    algorithm: "ED25519",
    fingerprint: "0".repeat(64),
    createTime: time,
  };
}

async function newGroup(store: Store, parent: string, name: string): Promise<string> {
  const uid = parent === "" ? newRootUid() : newChildUid(parent);
  await store.groups.insert({ uid, name, description: "", verified: false, createTime: T0, updateTime: T0 });
  return uid;
}

async function newRepo(store: Store, groupUid: string, name: string): Promise<string> {
  const uid = newChildUid(groupUid);
  await store.repos.insert({
    uid,
    groupUid,
    name,
    description: "",
    readme: "",
    createTime: T0,
    updateTime: T0,
  });
  return uid;
}

/** Polls `check` until it holds; fails after `ms`. */
async function until(check: () => Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`);
    await sleep(20);
  }
}

const names = (keys: readonly { name: string }[]) => keys.map((k) => k.name);

forEachEngine("trusted keyring on a store", (db) => {
  it("answers the keys at the repo and its ancestors, nearest first, with their registry paths", async () => {
    const store = await db.openFresh();
    const org = await newGroup(store, "", "acme");
    const folder = await newGroup(store, org, "prod");
    const repo = await newRepo(store, folder, "api");
    const sibling = await newRepo(store, folder, "web");
    const otherOrg = await newGroup(store, "", "other");
    const atOrg = keyRow(org, "org-key", T0);
    const atOrgNewer = keyRow(org, "org-key-2", T0 + 1);
    const atFolder = keyRow(folder, "folder-key");
    const atRepo = keyRow(repo, "repo-key");
    for (const row of [
      atOrgNewer,
      atOrg,
      atFolder,
      atRepo,
      keyRow(sibling, "sibling-key"),
      keyRow(otherOrg, "x"),
    ]) {
      await store.trustedKeys.insert(row);
    }
    const keyring = createTrustedKeyring({ store, changes: store.changes });
    try {
      const keys = await keyring.keysFor(repo);
      assert.deepEqual(names(keys), ["repo-key", "folder-key", "org-key", "org-key-2"]);
      assert.deepEqual(keys[0], {
        uid: atRepo.uid,
        name: "repo-key",
        parentUid: repo,
        parentPath: "acme/prod/api",
        publicKeyPem: PEM,
        createTime: T0,
      });
      assert.deepEqual(
        keys.map((k) => k.parentPath),
        ["acme/prod/api", "acme/prod", "acme", "acme"],
      );
      assert.deepEqual(names(await keyring.keysFor(sibling)), [
        "sibling-key",
        "folder-key",
        "org-key",
        "org-key-2",
      ]);
      assert.deepEqual(
        await keyring.keysFor(newChildUid(folder)),
        [],
        "a repo that does not exist has no keys",
      );
    } finally {
      keyring.close();
    }
  });

  it("sees a key added or deleted, a folder renamed and a repo deleted at the next read", async () => {
    const store = await db.openFresh();
    const org = await newGroup(store, "", "beta");
    const folder = await newGroup(store, org, "team");
    const repo = await newRepo(store, folder, "app");
    const keyring = createTrustedKeyring({ store, changes: store.changes, ttlMs: 3600_000 });
    try {
      assert.deepEqual(await keyring.keysFor(repo), []);
      const added = keyRow(folder, "k1");
      await store.trustedKeys.insert(added);
      assert.deepEqual(names(await keyring.keysFor(repo)), ["k1"]);

      const group = await store.groups.get(folder);
      assert.ok(group);
      await store.groups.update({ ...group, name: "renamed" });
      assert.equal((await keyring.keysFor(repo))[0]?.parentPath, "beta/renamed");

      await store.trustedKeys.delete(added.uid);
      assert.deepEqual(await keyring.keysFor(repo), []);

      await store.trustedKeys.insert(keyRow(repo, "at-repo"));
      assert.deepEqual(names(await keyring.keysFor(repo)), ["at-repo"]);
      await store.repos.delete(repo);
      assert.deepEqual(await keyring.keysFor(repo), [], "the repo's keys went with it");
    } finally {
      keyring.close();
    }
  });

  if (db.engine === "postgres") {
    it("sees another process's key added and deleted (the change feed across processes)", async () => {
      const options = await db.freshOptions();
      const writer = await db.open(options);
      const reader = await db.open({ ...options, listenForChanges: true });
      const org = await newGroup(writer, "", "replicated");
      const repo = await newRepo(writer, org, "app");
      // Long TTL: only the change feed can make the reader see the writes.
      const keyring = createTrustedKeyring({ store: reader, changes: reader.changes, ttlMs: 3600_000 });
      try {
        assert.deepEqual(await keyring.keysFor(repo), []);
        const row = keyRow(org, "from-the-writer");
        await writer.trustedKeys.insert(row);
        await until(
          async () => names(await keyring.keysFor(repo)).includes("from-the-writer"),
          "the reader's keyring sees the writer's new key",
        );
        await writer.trustedKeys.delete(row.uid);
        await until(
          async () => (await keyring.keysFor(repo)).length === 0,
          "the reader's keyring sees the writer's delete",
        );
      } finally {
        keyring.close();
      }
    });
  }
});

describe("trusted keyring caching", () => {
  const org = "a".repeat(40);
  const repo = `${org}/${"b".repeat(16)}`;
  const row: TrustedKeyRow = { ...keyRow(org, "k"), uid: `${org}/${"c".repeat(16)}` };

  /** A store whose reads are counted and whose change feed the test drives. */
  function fakeStore(rows: TrustedKeyRow[] = [row]) {
    const hub = createChangeHub();
    let reads = 0;
    const store = {
      trustedKeys: {
        ofParents: async (parents: readonly string[]) => {
          reads++;
          return rows.filter((r) => parents.includes(r.parentUid));
        },
      },
      repos: { get: async (uid: string) => ({ uid, groupUid: org, name: "app" }) },
      groups: { getMany: async () => [{ uid: org, name: "acme" }] },
    } as unknown as Pick<Store, "trustedKeys" | "groups" | "repos">;
    return { store, hub, reads: () => reads };
  }
  const batch = (tables: string[]): ChangeBatch => ({ tables, everything: false });

  it("reads once for many answers of one repo, and the answers are copies", async () => {
    const fake = fakeStore();
    const keyring = createTrustedKeyring({ store: fake.store, changes: fake.hub, clock: { now: () => T0 } });
    const answers = await Promise.all([keyring.keysFor(repo), keyring.keysFor(repo), keyring.keysFor(repo)]);
    for (let i = 0; i < 50; i++) await keyring.keysFor(repo);
    assert.equal(fake.reads(), 1);
    assert.equal(answers[0]?.[0]?.parentPath, "acme");
    answers[0]?.pop();
    assert.equal((await keyring.keysFor(repo)).length, 1, "a caller's change to its answer is its own");
    keyring.close();
  });

  it("reads again after a change to trusted_keys, groups or repos, not after other tables' changes", async () => {
    const fake = fakeStore();
    const keyring = createTrustedKeyring({ store: fake.store, changes: fake.hub, clock: { now: () => T0 } });
    await keyring.keysFor(repo);
    fake.hub.publish(batch(["tags", "manifests", "vuln_reports"]));
    await keyring.keysFor(repo);
    assert.equal(fake.reads(), 1);
    let expected = 1;
    for (const table of ["trusted_keys", "groups", "repos"]) {
      fake.hub.publish(batch([table]));
      await keyring.keysFor(repo);
      assert.equal(fake.reads(), ++expected, table);
    }
    fake.hub.publish({ tables: [], everything: true });
    await keyring.keysFor(repo);
    assert.equal(fake.reads(), ++expected);
    keyring.close();
    fake.hub.publish(batch(["trusted_keys"]));
    await keyring.keysFor(repo);
    assert.equal(fake.reads(), expected, "a closed keyring no longer follows the feed");
  });

  it("reads again after its TTL even when no change arrives (a lost notification)", async () => {
    const fake = fakeStore();
    let now = T0;
    const clock: Clock = { now: () => now };
    const keyring = createTrustedKeyring({ store: fake.store, changes: fake.hub, clock, ttlMs: 1000 });
    await keyring.keysFor(repo);
    now += 999;
    await keyring.keysFor(repo);
    assert.equal(fake.reads(), 1);
    now += 2;
    await keyring.keysFor(repo);
    assert.equal(fake.reads(), 2);
    keyring.close();
  });

  it("does not keep an answer read while a change arrived, nor a failed read", async () => {
    let release: () => void = () => {};
    const hub = createChangeHub();
    let reads = 0;
    const store = {
      trustedKeys: {
        ofParents: async () => {
          reads++;
          if (reads === 1) await new Promise<void>((r) => (release = r));
          if (reads === 3) throw new Error("database gone");
          return reads === 1 ? [] : [row];
        },
      },
      repos: { get: async (uid: string) => ({ uid, groupUid: org, name: "app" }) },
      groups: { getMany: async () => [{ uid: org, name: "acme" }] },
    } as unknown as Pick<Store, "trustedKeys" | "groups" | "repos">;
    const keyring = createTrustedKeyring({ store, changes: hub, clock: { now: () => T0 } });
    const first = keyring.keysFor(repo);
    await sleep(0);
    hub.publish(batch(["trusted_keys"]));
    release();
    assert.deepEqual(await first, [], "the read under way answers from what it read");
    assert.deepEqual(names(await keyring.keysFor(repo)), ["k"], "the next one reads again");
    hub.publish(batch(["trusted_keys"]));
    await assert.rejects(keyring.keysFor(repo), /database gone/);
    assert.deepEqual(names(await keyring.keysFor(repo)), ["k"], "a failed read is not kept");
    keyring.close();
  });

  it("holds at most maxRepos answers", async () => {
    const fake = fakeStore();
    const keyring = createTrustedKeyring({
      store: fake.store,
      changes: fake.hub,
      clock: { now: () => T0 },
      maxRepos: 2,
    });
    await keyring.keysFor(repo);
    await keyring.keysFor(`${org}/${"d".repeat(16)}`);
    await keyring.keysFor(`${org}/${"e".repeat(16)}`);
    assert.equal(fake.reads(), 3);
    await keyring.keysFor(repo);
    assert.equal(fake.reads(), 4, "the cache started over past its bound");
    keyring.close();
  });
});
