// The seed of `npm run bench:scale` (bench/scale/seed.ts) on both engines: a tiny deployment has
// the shape the bench assumes (row counts, the hot tag's history, tags resolving to manifests, EOL
// rules, what GC would collect), read back through the real Store, so the bench cannot rot silently.
import assert from "node:assert/strict";
import { it } from "node:test";
import { sql } from "kysely";
import { PAGE_SIZE, tagPageWindow, timeOperations, walkHotHistory } from "../../bench/scale/operations.js";
import {
  checkSizes,
  FULL_SIZES,
  manifestDigest,
  repoOf,
  type ScaleSizes,
  SEED_ORG,
  scaleSizes,
  seedScale,
  tagOf,
} from "../../bench/scale/seed.js";
import { systemClock } from "../../src/core/clock.js";
import { createEventRecorder } from "../../src/events/event-recorder.js";
import { collectGarbage } from "../../src/registry/data-plane/garbage-collector.js";
import { createRegistryContent } from "../../src/registry/data-plane/registry-content.js";
import { createMemoryBlobDriver } from "../../src/storage/blobs/memory/memory-blob-driver.js";
import { connectDatabase } from "../../src/storage/sql/connect-database.js";
import { migrateToLatest } from "../../src/storage/sql/migrate.js";
import { forEachEngine } from "../support/databases.js";

// 3 repos; 12 tags (4 per repo); 40 history rows, 10 on the hot tag; 3 untagged manifests; 20 blobs.
const SIZES: ScaleSizes = { repos: 3, tags: 12, history: 40, hot: 10, manifests: 15, blobs: 20 };

forEachEngine("bench:scale seed", (db) => {
  it("seeds the counts asked for, and the store reads them back consistently", async () => {
    const options = await db.freshOptions();
    const { db: raw, dialect } = await connectDatabase(options);
    try {
      await migrateToLatest(raw, dialect.name);
      await seedScale(raw, dialect.name, SIZES);
      const count = async (table: string) =>
        Number(
          (await sql<{ n: number | bigint }>`select count(*) as n from ${sql.table(table)}`.execute(raw))
            .rows[0]?.n,
        );
      assert.deepEqual(
        {
          repos: await count("repos"),
          tags: await count("tags"),
          history: await count("tag_history"),
          manifests: await count("manifests"),
          blobs: await count("blobs"),
          links: await count("repo_blobs"),
          references: await count("manifest_references"),
          rules: await count("eol_rules"),
        },
        { repos: 3, tags: 12, history: 40, manifests: 15, blobs: 20, links: 20, references: 20, rules: 1 },
      );
      // Every tag but the hot one holds a share of the other 30 history rows.
      const perTag = await sql<{ tag_name: string; n: number | bigint }>`
        select tag_name, count(*) as n from tag_history group by repo_uid, tag_name`.execute(raw);
      assert.equal(perTag.rows.length, 12);
    } finally {
      await raw.destroy();
    }

    const store = await db.open(options);
    const repo = await store.repos.get(repoOf(1).uid);
    assert.equal(repo?.name, "r000001");
    assert.equal(repo?.groupUid, SEED_ORG);

    // ListTags over the org: one page holds all 12, in uid order, and the total agrees.
    const page = await store.tags.list({ uidp: { descendantsOf: SEED_ORG } }, await tagPageWindow(store, 1));
    assert.equal(page.rows.length, 12);
    assert.equal(page.total, 12n);
    const uids = page.rows.map((t) => t.uid);
    assert.deepEqual(uids, [...uids].sort());
    // Each tag is where tagOf says, named as it says, and resolves to its manifest through the registry's content layer.
    const content = createRegistryContent({
      store,
      blobs: createMemoryBlobDriver(),
      clock: systemClock,
      events: createEventRecorder({ apiUrl: "http://127.0.0.1/", registryUrl: "http://127.0.0.1/" }),
    });
    for (let n = 0; n < SIZES.tags; n++) {
      const tag = tagOf(n, SIZES);
      const row = await store.tags.getByName(tag.repoUid, tag.name);
      assert.equal(row?.uid, tag.uid, `tag ${n}`);
      assert.equal(row?.digest, manifestDigest(n));
      const manifest = await content.manifest(tag.repoUid, manifestDigest(n));
      assert.equal(Buffer.from(manifest?.content ?? []).toString(), '{"schemaVersion":2}');
    }
    // A deeper page (page size 50) of 12 tags is the first page, the last there is.
    assert.equal((await tagPageWindow(store, 3)).after, undefined);

    // The hot tag's history: exactly `hot` records, oldest first, walked page by page.
    assert.equal(await walkHotHistory(store), SIZES.hot);
    const history = await store.tags.history({ repoUid: repoOf(0).uid, tagName: "1.0", limit: 100 });
    const times = history.map((h) => h.updateTime);
    assert.deepEqual(
      times,
      [...times].sort((a, b) => a - b),
    );
    assert.equal(new Set(times).size, SIZES.hot);

    // The EOL rule covers repo r000000: its 4 tags (0, 3, 6, 9) are the ListEolTags answer.
    const eol = await store.eol.listTags(
      {},
      { order: { field: "uid", desc: false }, limit: PAGE_SIZE, skip: 0 },
    );
    assert.deepEqual(
      eol.rows.map((t) => t.name),
      ["1.0", "1.1", "1.2", "1.3"],
    );
    assert.equal(eol.total, 4n);

    // GC would collect the 3 untagged manifests (their history is older than the window) and, with
    // them, the links and rows of the 3 blobs only they reference; the dry run removes nothing.
    const gc = await collectGarbage(
      { store, blobs: createMemoryBlobDriver(), clock: systemClock },
      { dryRun: true },
    );
    assert.deepEqual(
      { manifests: gc.manifests, links: gc.links, blobs: gc.blobs },
      { manifests: 3, links: 3, blobs: 3 },
    );
    assert.equal((await store.manifests.get(repoOf(0).uid, manifestDigest(12))) !== undefined, true);
  });

  it("the bench's operations all run on the seeded deployment", async () => {
    const options = await db.freshOptions();
    const { db: raw, dialect } = await connectDatabase(options);
    try {
      await migrateToLatest(raw, dialect.name);
      await seedScale(raw, dialect.name, SIZES);
    } finally {
      await raw.destroy();
    }
    const store = await db.open(options);
    const uncounted = await db.open({ ...options, listCountTtlMs: 0 });
    const { figures, gcPhases } = await timeOperations({ store, uncounted }, SIZES, 3, 1);
    for (const [name, figure] of Object.entries(figures)) {
      assert.ok(figure.p50 > 0 && figure.p99 >= figure.p50, `${name}: ${JSON.stringify(figure)}`);
    }
    assert.ok(gcPhases.manifests !== undefined && gcPhases.manifests > 0);
  });
});

it("scaled sizes keep the deployment's shape, and inconsistent sizes are refused by name", () => {
  assert.deepEqual(scaleSizes(FULL_SIZES, 0.001), {
    repos: 10,
    tags: 1000,
    history: 10_000,
    hot: 100,
    manifests: 1000,
    blobs: 1000,
  });
  checkSizes(FULL_SIZES);
  assert.throws(() => checkSizes({ ...SIZES, manifests: 5 }), /--manifests \(5\) must be ≥ --tags \(12\)/);
  assert.throws(() => checkSizes({ ...SIZES, hot: 41 }), /--hot \(41\) must be ≤ --history \(40\)/);
  assert.throws(() => checkSizes({ ...SIZES, repos: 0 }), /--repos must be a whole number ≥ 1, got 0/);
  assert.throws(() => checkSizes({ ...SIZES, tags: 2 }), /--tags \(2\) must be ≥ --repos \(3\)/);
});
