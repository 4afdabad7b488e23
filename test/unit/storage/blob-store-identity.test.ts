import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { after, describe, it } from "node:test";
import {
  BLOB_STORE_BOUND_SETTING,
  BlobStoreMismatchError,
  bindBlobStore,
  STORE_ID_SETTING,
} from "../../../src/storage/blob-store-identity.js";
import type { BlobDriver } from "../../../src/storage/blobs/blob-driver.js";
import { BLOB_STORE_ID_KEY, blobKey } from "../../../src/storage/blobs/blob-layout.js";
import { createFilesystemBlobDriver } from "../../../src/storage/blobs/filesystem/filesystem-blob-driver.js";
import { createMemoryBlobDriver } from "../../../src/storage/blobs/memory/memory-blob-driver.js";
import { createS3BlobDriver } from "../../../src/storage/blobs/s3/s3-blob-driver.js";
import type { Store } from "../../../src/storage/store.js";
import { startTestS3rver } from "../../conformance/blobs/blob-test-backends.js";
import { groupRow, repoRow, T0 } from "../../conformance/store/fixtures.js";
import { forEachEngine } from "../../support/databases.js";

// bindBlobStore over real databases (SQLite, PostgreSQL) and real blob drivers (a temp folder,
// memory, S3 on an in-process s3rver): every case of the decision table, and racing starters.

/** A new, empty blob store: its driver, its name for messages, and a second driver on the same place. */
interface FreshBlobStore {
  driver: BlobDriver;
  location: string;
  /** Another handle on the same storage, as a second server process would open. */
  reopen(): BlobDriver;
}

interface BlobBackend {
  kind: BlobDriver["kind"];
  skip?: string;
  fresh(): Promise<FreshBlobStore>;
}

const opened: BlobDriver[] = [];
const folders: string[] = [];
const track = (driver: BlobDriver) => {
  opened.push(driver);
  return driver;
};

const filesystem: BlobBackend = {
  kind: "filesystem",
  async fresh() {
    const root = await mkdtemp(join(tmpdir(), "wharf-binding-"));
    folders.push(root);
    const open = () => track(createFilesystemBlobDriver({ root, fsync: false }));
    return { driver: open(), location: root, reopen: open };
  },
};

const memory: BlobBackend = {
  kind: "memory",
  async fresh() {
    const driver = track(createMemoryBlobDriver());
    return { driver, location: "memory:", reopen: () => driver };
  },
};

const s3rver =
  process.env.WHARF_TEST_S3 === "skip"
    ? { skip: "S3 disabled by WHARF_TEST_S3=skip" }
    : await startTestS3rver();
const s3: BlobBackend = {
  kind: "s3",
  ...("skip" in s3rver && { skip: s3rver.skip }),
  async fresh() {
    if ("skip" in s3rver) throw new Error(s3rver.skip);
    const options = { ...s3rver.options, prefix: `binding-${randomBytes(4).toString("hex")}` };
    const open = () => track(createS3BlobDriver(options));
    return { driver: open(), location: `s3://${options.bucket}/${options.prefix}`, reopen: open };
  },
};

after(async () => {
  await Promise.allSettled(opened.map((d) => d.close()));
  await Promise.all(folders.map((f) => rm(f, { recursive: true, force: true })));
  if (!("skip" in s3rver)) await s3rver.stop();
});

/** Puts the bytes of a (fake) blob where the registry keeps blobs. */
async function putBlobBytes(blobs: BlobDriver, n: number): Promise<void> {
  const hex = n.toString(16).padStart(64, "0");
  await blobs.put(blobKey({ algorithm: "sha256", hex }), Readable.from([Buffer.from(`blob ${n}`)]));
}

/** Records a blob row in `store` (a group, a repo, one linked blob). */
async function recordBlob(store: Store, n: number): Promise<void> {
  const group = groupRow("", `org-${randomBytes(3).toString("hex")}`);
  await store.groups.insert(group);
  const repo = repoRow(group.uid, "app");
  await store.repos.insert(repo);
  const digest = `sha256:${n.toString(16).padStart(64, "0")}`;
  await store.blobs.link(repo.uid, { digest, size: 6, createTime: T0 }, T0);
}

async function stampOf(blobs: BlobDriver): Promise<string | undefined> {
  if ((await blobs.stat(BLOB_STORE_ID_KEY)) === undefined) return undefined;
  return (await text(await blobs.read(BLOB_STORE_ID_KEY))).trim();
}

/** Everything the binding could change: both settings, the stamp, every key of the blob store. */
async function snapshot(store: Store, blobs: BlobDriver) {
  const keys: string[] = [];
  for await (const entry of blobs.list("")) keys.push(entry.key);
  return {
    storeId: await store.settings.get(STORE_ID_SETTING),
    bound: await store.settings.get(BLOB_STORE_BOUND_SETTING),
    stamp: await stampOf(blobs),
    keys,
  };
}

forEachEngine("bindBlobStore", (db) => {
  // Every driver on SQLite; PostgreSQL (a database per case costs seconds) on the filesystem only.
  const backends = db.engine === "sqlite" ? [filesystem, memory, s3] : [filesystem];
  for (const backend of backends) {
    describe(`on ${backend.kind} blob storage`, () => {
      if (backend.skip !== undefined) {
        it(`runs on ${backend.kind}`, { skip: backend.skip }, () => {});
        return;
      }
      const pair = async () => {
        const store = await db.openFresh();
        const blobs = await backend.fresh();
        return {
          store,
          blobs,
          where: { database: `db-${randomBytes(3).toString("hex")}`, blobStore: blobs.location },
        };
      };
      /** Asserts `bind` refuses with one line naming both places, mentioning `why`, changing nothing. */
      const assertRefused = async (p: Awaited<ReturnType<typeof pair>>, why: RegExp): Promise<void> => {
        const before = await snapshot(p.store, p.blobs.driver);
        await assert.rejects(bindBlobStore(p.store, p.blobs.driver, p.where), (err: Error) => {
          assert.ok(err instanceof BlobStoreMismatchError, String(err));
          assert.ok(!err.message.includes("\n"), "one line");
          assert.ok(err.message.includes(p.where.database), `names the database: ${err.message}`);
          assert.ok(err.message.includes(p.where.blobStore), `names the blob store: ${err.message}`);
          assert.match(err.message, why);
          return true;
        });
        assert.deepEqual(await snapshot(p.store, p.blobs.driver), before, "nothing changed");
      };

      it("stamps a fresh pair on both sides, then accepts it on every later start", async () => {
        const p = await pair();
        const id = await bindBlobStore(p.store, p.blobs.driver, p.where);
        assert.match(id, /^[0-9a-f]{32}$/);
        assert.equal(await p.store.settings.get(STORE_ID_SETTING), id);
        assert.equal(await stampOf(p.blobs.driver), id);
        assert.equal(await bindBlobStore(p.store, p.blobs.reopen(), p.where), id);
        assert.equal(await bindBlobStore(p.store, p.blobs.driver, p.where), id, "idempotent");
      });

      it("refuses the blob store of another deployment, naming both places", async () => {
        const a = await pair();
        const b = await pair();
        const idA = await bindBlobStore(a.store, a.blobs.driver, a.where);
        const idB = await bindBlobStore(b.store, b.blobs.driver, b.where);
        await putBlobBytes(b.blobs.driver, 1);
        await assertRefused(
          { ...a, blobs: b.blobs, where: { ...a.where, blobStore: b.where.blobStore } },
          new RegExp(`${idB}.*${idA}`),
        );
        assert.equal(await stampOf(b.blobs.driver), idB);
      });

      it("refuses a stamped blob store for a database without an id (a fresh or pre-id database)", async () => {
        const a = await pair();
        await bindBlobStore(a.store, a.blobs.driver, a.where);
        const fresh = await pair();
        await assertRefused(
          { ...fresh, blobs: a.blobs, where: { ...fresh.where, blobStore: a.where.blobStore } },
          /the database has no id/,
        );
        assert.equal(await fresh.store.settings.get(STORE_ID_SETTING), undefined);
      });

      it("adopts an empty blob store for a bound database that records no blobs", async () => {
        const a = await pair();
        const id = await bindBlobStore(a.store, a.blobs.driver, a.where);
        const empty = await backend.fresh();
        assert.equal(
          await bindBlobStore(a.store, empty.driver, { ...a.where, blobStore: empty.location }),
          id,
        );
        assert.equal(await stampOf(empty.driver), id);
      });

      it("refuses an empty blob store for a database that records blobs (a wrong place, or lost blobs)", async () => {
        const a = await pair();
        await bindBlobStore(a.store, a.blobs.driver, a.where);
        await recordBlob(a.store, 1);
        await putBlobBytes(a.blobs.driver, 1);
        const empty = await backend.fresh();
        await assertRefused(
          { ...a, blobs: empty, where: { ...a.where, blobStore: empty.location } },
          /records blobs but the blob store holds none/,
        );
      });

      it("refuses an unstamped blob store holding blobs for a bound database (another deployment's data)", async () => {
        const a = await pair();
        await bindBlobStore(a.store, a.blobs.driver, a.where);
        await recordBlob(a.store, 1);
        const foreign = await backend.fresh();
        await putBlobBytes(foreign.driver, 1);
        await assertRefused(
          { ...a, blobs: foreign, where: { ...a.where, blobStore: foreign.location } },
          /holds blobs but no id/,
        );
      });

      it("stamps both sides of a deployment from before ids (both hold blobs, neither has an id)", async () => {
        const p = await pair();
        await recordBlob(p.store, 1);
        await putBlobBytes(p.blobs.driver, 1);
        const id = await bindBlobStore(p.store, p.blobs.driver, p.where);
        assert.equal(await p.store.settings.get(STORE_ID_SETTING), id);
        assert.equal(await stampOf(p.blobs.driver), id);
        assert.ok(
          await p.blobs.driver.stat(blobKey({ algorithm: "sha256", hex: `${"0".repeat(63)}1` })),
          "the blob is untouched",
        );
      });

      it("refuses a pre-id pair whose blobs the database mostly does not know (two old deployments)", async () => {
        const p = await pair();
        await recordBlob(p.store, 1);
        await putBlobBytes(p.blobs.driver, 2);
        await putBlobBytes(p.blobs.driver, 3);
        await assertRefused(p, /of 2 blobs sampled in the blob store the database knows only 0/);
      });

      it("stamps a pre-id pair whose blob store also keeps a few strays a crash left", async () => {
        const p = await pair();
        await recordBlob(p.store, 1);
        await recordBlob(p.store, 2);
        for (const n of [1, 2, 3]) await putBlobBytes(p.blobs.driver, n);
        const id = await bindBlobStore(p.store, p.blobs.driver, p.where);
        assert.equal(await stampOf(p.blobs.driver), id);
      });

      it("completes a binding interrupted after the database's id was written", async () => {
        const p = await pair();
        await recordBlob(p.store, 1);
        await putBlobBytes(p.blobs.driver, 1);
        const id = await p.store.settings.putIfAbsent(STORE_ID_SETTING, "0123456789abcdef0123456789abcdef");
        assert.equal(await bindBlobStore(p.store, p.blobs.driver, p.where), id);
        assert.equal(await stampOf(p.blobs.driver), id);
      });

      it("refuses unstamped blobs for an unstamped database that records none (the reported gc story)", async () => {
        const p = await pair();
        await putBlobBytes(p.blobs.driver, 1);
        await assertRefused(p, /holds blobs the database has no record of/);
      });

      it("refuses an unstamped empty blob store for an unstamped database that records blobs", async () => {
        const p = await pair();
        await recordBlob(p.store, 1);
        await assertRefused(p, /records blobs but the blob store holds none/);
      });

      it("refuses a blob store whose identity object is not an id", async () => {
        const p = await pair();
        await p.blobs.driver.put(BLOB_STORE_ID_KEY, Readable.from([Buffer.from("hello\n")]));
        await assertRefused(p, /not a Wharf store id/);
      });

      it("servers starting at once on one database and one blob store agree on one id", async () => {
        const options = await db.freshOptions();
        const stores = [await db.open(options), await db.open(options), await db.open(options)];
        const blobs = await backend.fresh();
        const where = { database: "shared", blobStore: blobs.location };
        const ids = await Promise.all(stores.map((s) => bindBlobStore(s, blobs.reopen(), where)));
        assert.equal(new Set(ids).size, 1, ids.join(" "));
        assert.equal(await stampOf(blobs.driver), ids[0]);
        assert.equal(await stores[0]?.settings.get(STORE_ID_SETTING), ids[0]);
      });
    });
  }
});
