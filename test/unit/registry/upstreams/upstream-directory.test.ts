import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Clock } from "../../../../src/core/clock.js";
import { secretBoxOf } from "../../../../src/core/secret-box.js";
import { newChildUid, newRootUid } from "../../../../src/core/uidp.js";
import { createUpstreamDirectory } from "../../../../src/registry/upstreams/upstream-directory.js";
import { type ChangeBatch, createChangeHub } from "../../../../src/storage/change-feed.js";
import type { Store } from "../../../../src/storage/store.js";
import type { UpstreamRow, UpstreamWithOrg } from "../../../../src/storage/upstream-store.js";
import { forEachEngine } from "../../../support/databases.js";

const T0 = 1_767_225_600_000;

function upstreamRow(orgUid: string, name: string, over: Partial<UpstreamRow> = {}): UpstreamRow {
  return {
    uid: newChildUid(orgUid),
    orgUid,
    name,
    url: `https://${name}.example`,
    username: "",
    passwordSealed: "",
    tagTtlMs: 600_000,
    createTime: T0,
    updateTime: T0,
    ...over,
  };
}

async function newOrg(store: Store, name: string): Promise<string> {
  const uid = newRootUid();
  await store.groups.insert({ uid, name, description: "", verified: false, createTime: T0, updateTime: T0 });
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

forEachEngine("upstream directory on a store", (db) => {
  it("resolves <org>/<upstream>/<path>, opens the password, and answers undefined for everything else", async () => {
    const store = await db.openFresh();
    const secrets = secretBoxOf(store.settings);
    const org = await newOrg(store, "acme");
    const row = upstreamRow(org, "hub", {
      url: "https://registry.example/mirror",
      username: "robot",
      passwordSealed: await secrets.seal("s3cret"),
      tagTtlMs: 90_000,
      updateTime: T0 + 7,
    });
    await store.upstreams.insert(row);
    const directory = createUpstreamDirectory({ store, secrets, clock: { now: () => Date.now() } });
    try {
      const target = await directory.lookup("acme/hub/library/alpine");
      assert.deepEqual(target, {
        path: "library/alpine",
        upstream: {
          uid: row.uid,
          orgUid: org,
          orgName: "acme",
          name: "hub",
          url: "https://registry.example/mirror",
          username: "robot",
          password: "s3cret",
          tagTtlMs: 90_000,
          updateTime: T0 + 7,
        },
      });
      assert.equal((await directory.lookup("acme/hub/x"))?.path, "x");
      assert.equal(await directory.lookup("acme/hub"), undefined, "the namespace itself is no repository");
      assert.equal(await directory.lookup("acme"), undefined);
      assert.equal(await directory.lookup("acme/other/x"), undefined);
      assert.equal(await directory.lookup("nobody/hub/x"), undefined);
      assert.equal((await directory.byName("acme", "hub"))?.password, "s3cret");
      assert.equal(await directory.byName("acme", "nope"), undefined);
    } finally {
      directory.close();
    }
  });

  it("sees an update, a delete, a new upstream and an organization renamed at the next lookup", async () => {
    const store = await db.openFresh();
    const secrets = secretBoxOf(store.settings);
    const org = await newOrg(store, "beta");
    const row = upstreamRow(org, "hub");
    await store.upstreams.insert(row);
    const directory = createUpstreamDirectory({ store, secrets, clock: { now: () => Date.now() } });
    try {
      assert.equal((await directory.lookup("beta/hub/a"))?.upstream.url, "https://hub.example");
      assert.equal(await directory.lookup("beta/new/a"), undefined);

      await store.upstreams.update({
        ...row,
        url: "https://moved.example",
        passwordSealed: await secrets.seal("p2"),
        updateTime: T0 + 1,
      });
      const updated = await directory.lookup("beta/hub/a");
      assert.equal(updated?.upstream.url, "https://moved.example");
      assert.equal(updated?.upstream.password, "p2");
      assert.equal(updated?.upstream.updateTime, T0 + 1);

      await store.upstreams.insert(upstreamRow(org, "new"));
      assert.equal((await directory.lookup("beta/new/a"))?.upstream.name, "new");

      const group = await store.groups.get(org);
      assert.ok(group);
      await store.groups.update({ ...group, name: "gamma" });
      assert.equal(await directory.lookup("beta/hub/a"), undefined);
      assert.equal((await directory.lookup("gamma/hub/a"))?.upstream.uid, row.uid);

      await store.upstreams.delete(row.uid);
      assert.equal(await directory.lookup("gamma/hub/a"), undefined);
    } finally {
      directory.close();
    }
  });

  if (db.engine === "postgres") {
    it("sees another replica's update and delete (the change feed across processes)", async () => {
      const options = await db.freshOptions();
      const writer = await db.open(options);
      const reader = await db.open({ ...options, listenForChanges: true });
      const org = await newOrg(writer, "replicated");
      const row = upstreamRow(org, "hub");
      await writer.upstreams.insert(row);
      // Long TTL: only the change feed can make the reader see the writes.
      const directory = createUpstreamDirectory({
        store: reader,
        secrets: secretBoxOf(reader.settings),
        clock: { now: () => Date.now() },
        ttlMs: 3600_000,
      });
      try {
        assert.equal((await directory.lookup("replicated/hub/x"))?.upstream.url, "https://hub.example");
        await writer.upstreams.update({
          ...row,
          url: "https://elsewhere.example",
          passwordSealed: await secretBoxOf(writer.settings).seal("from-the-writer"),
          updateTime: T0 + 1,
        });
        await until(
          async () =>
            (await directory.lookup("replicated/hub/x"))?.upstream.url === "https://elsewhere.example",
          "the reader's directory sees the writer's update",
        );
        assert.equal((await directory.lookup("replicated/hub/x"))?.upstream.password, "from-the-writer");
        await writer.upstreams.delete(row.uid);
        await until(
          async () => (await directory.lookup("replicated/hub/x")) === undefined,
          "the reader's directory sees the writer's delete",
        );
      } finally {
        directory.close();
      }
    });
  }
});

describe("upstream directory caching", () => {
  /** A store whose `all()` is counted and whose change feed the test drives. */
  function fakeStore(rows: UpstreamWithOrg[]) {
    const hub = createChangeHub();
    let reads = 0;
    const store = {
      changes: hub,
      upstreams: {
        all: async () => {
          reads++;
          return rows.map((r) => ({ ...r }));
        },
      },
    } as unknown as Pick<Store, "upstreams" | "changes">;
    return { store, hub, reads: () => reads };
  }
  const plainBox = { seal: async (s: string) => s, open: async (s: string) => s };
  const row: UpstreamWithOrg = { ...upstreamRow("org1", "hub"), uid: "org1/0000000000000001", orgName: "o" };
  const batch = (tables: string[]): ChangeBatch => ({ tables, everything: false });

  it("reads the table once for many lookups, hits and misses alike", async () => {
    const fake = fakeStore([row]);
    const directory = createUpstreamDirectory({
      store: fake.store,
      secrets: plainBox,
      clock: { now: () => T0 },
    });
    await Promise.all([
      directory.lookup("o/hub/a"),
      directory.lookup("o/hub/b"),
      directory.lookup("p/q/r"),
      directory.byName("o", "hub"),
    ]);
    for (let i = 0; i < 100; i++) await directory.lookup(`x${i}/y/z`);
    assert.equal(fake.reads(), 1);
    directory.close();
  });

  it("reads again after a change to upstreams or groups, not after other tables' changes", async () => {
    const fake = fakeStore([row]);
    const directory = createUpstreamDirectory({
      store: fake.store,
      secrets: plainBox,
      clock: { now: () => T0 },
    });
    await directory.lookup("o/hub/a");
    fake.hub.publish(batch(["tags", "repos"]));
    await directory.lookup("o/hub/a");
    assert.equal(fake.reads(), 1);
    fake.hub.publish(batch(["upstreams"]));
    await directory.lookup("o/hub/a");
    assert.equal(fake.reads(), 2);
    fake.hub.publish(batch(["groups"]));
    await directory.lookup("o/hub/a");
    assert.equal(fake.reads(), 3);
    fake.hub.publish({ tables: [], everything: true });
    await directory.lookup("o/hub/a");
    assert.equal(fake.reads(), 4);
    directory.close();
    fake.hub.publish(batch(["upstreams"]));
    await directory.lookup("o/hub/a");
    assert.equal(fake.reads(), 4, "a closed directory no longer follows the feed");
  });

  it("reads again after its TTL even when no change arrives (a lost notification)", async () => {
    const fake = fakeStore([row]);
    let now = T0;
    const clock: Clock = { now: () => now };
    const directory = createUpstreamDirectory({ store: fake.store, secrets: plainBox, clock, ttlMs: 1000 });
    await directory.lookup("o/hub/a");
    now += 999;
    await directory.lookup("o/hub/a");
    assert.equal(fake.reads(), 1);
    now += 2;
    await directory.lookup("o/hub/a");
    assert.equal(fake.reads(), 2);
    directory.close();
  });

  it("does not keep a snapshot read while a change arrived", async () => {
    let release: () => void = () => {};
    const hub = createChangeHub();
    let reads = 0;
    const store = {
      changes: hub,
      upstreams: {
        all: async () => {
          reads++;
          if (reads === 1) await new Promise<void>((r) => (release = r));
          return reads === 1 ? [] : [row];
        },
      },
    } as unknown as Pick<Store, "upstreams" | "changes">;
    const directory = createUpstreamDirectory({ store, secrets: plainBox, clock: { now: () => T0 } });
    const first = directory.lookup("o/hub/a");
    await sleep(0);
    hub.publish(batch(["upstreams"]));
    release();
    assert.equal(await first, undefined, "the lookup under way answers from what it read");
    assert.equal((await directory.lookup("o/hub/a"))?.upstream.name, "hub", "the next one reads again");
    directory.close();
  });

  it("opens each upstream's password once, and a failed open fails only that upstream's lookups", async () => {
    const other: UpstreamWithOrg = {
      ...row,
      uid: "org1/0000000000000002",
      name: "bad",
      passwordSealed: "broken",
    };
    const fake = fakeStore([{ ...row, passwordSealed: "good" }, other]);
    let opens = 0;
    const box = {
      seal: async (s: string) => s,
      open: async (s: string) => {
        opens++;
        if (s === "broken") throw new Error("sealed secret: does not open");
        return `opened-${s}`;
      },
    };
    const directory = createUpstreamDirectory({ store: fake.store, secrets: box, clock: { now: () => T0 } });
    assert.equal((await directory.lookup("o/hub/a"))?.upstream.password, "opened-good");
    assert.equal((await directory.lookup("o/hub/b"))?.upstream.password, "opened-good");
    assert.equal(opens, 1);
    await assert.rejects(directory.lookup("o/bad/a"), /does not open/);
    directory.close();
  });
});
