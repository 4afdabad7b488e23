import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { before, describe, it } from "node:test";
import fc from "fast-check";
import pg from "pg";
import { newChildUid } from "../../../src/core/uidp.js";
import { EMPTY_BLOB_DIGEST } from "../../../src/registry/manifest-parser.js";
import type { ManifestReference, RepoRow } from "../../../src/storage/registry-store.js";
import { migrationsFor } from "../../../src/storage/sql/migrations/migrations.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { groupRow, repoRow, T0 } from "./fixtures.js";
import { connectTo, migrateUpTo } from "./older-schema.js";

const sha = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

/** A pool of layers shared by every organization and repo of a run. */
const LAYERS = [1_000, 2_000, 3_000, 5_000, 7_000, 11_000].map((size, i) => ({
  digest: sha(`layer ${i}`),
  size,
}));

type Op =
  | {
      kind: "push";
      org: number;
      repo: number;
      layers: number[];
      variant: number;
      tag: number;
      empty: boolean;
    }
  | { kind: "index"; org: number; repo: number; tag: number }
  | { kind: "untag"; org: number; repo: number; tag: number }
  | { kind: "deleteManifest"; org: number; repo: number; pick: number }
  | { kind: "deleteRepo"; org: number; repo: number }
  | { kind: "uploadEmpty"; org: number; repo: number }
  | { kind: "gc" };

const at = { org: fc.nat(1), repo: fc.nat(2) };
const OP: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant("push" as const),
      ...at,
      layers: fc.uniqueArray(fc.nat(LAYERS.length - 1), { maxLength: 3 }),
      variant: fc.nat(2),
      tag: fc.integer({ min: -1, max: 2 }),
      empty: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("index" as const), ...at, tag: fc.nat(2) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("untag" as const), ...at, tag: fc.nat(2) }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("deleteManifest" as const), ...at, pick: fc.nat(9) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("deleteRepo" as const), ...at }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("uploadEmpty" as const), ...at }) },
  { weight: 1, arbitrary: fc.constant({ kind: "gc" as const }) },
);

/**
 * Usage accounting (ADR 0047): the incremental `storageBytes` equals a full recount after any
 * sequence of pushes, tag and manifest deletes, repo deletes and garbage collection; the
 * migration counts what a store held before it.
 */
export function usageCases(db: TestDatabase): void {
  describe("registry usage", () => {
    let store: Store;
    let worldCount = 0;
    before(async () => {
      store = await db.openFresh();
    });

    /** Two organizations; the third repo of each sits in a folder. */
    async function world(now: () => number) {
      const orgs: { uid: string; groups: string[]; repos: (RepoRow | undefined)[] }[] = [];
      for (let i = 0; i < 2; i++) {
        const org = groupRow("", `usage-org-${i}-${worldCount++}`);
        await store.groups.insert(org);
        const folder = groupRow(org.uid, "folder");
        await store.groups.insert(folder);
        orgs.push({ uid: org.uid, groups: [org.uid, org.uid, folder.uid], repos: [] });
      }
      const repoOf = async (o: number, r: number): Promise<RepoRow> => {
        const org = orgs[o] as (typeof orgs)[number];
        const existing = org.repos[r];
        if (existing) return existing;
        const repo = repoRow(org.groups[r] as string, `repo-${r}`, now());
        await store.repos.insert(repo);
        org.repos[r] = repo;
        return repo;
      };
      /** Every manifest digest pushed in the run, in push order. */
      const pushed: string[] = [];
      return { orgs, repoOf, pushed };
    }

    async function putManifest(
      repo: RepoRow,
      content: string,
      references: ManifestReference[],
      time: number,
    ) {
      const digest = sha(content);
      await store.manifests.put(
        {
          repoUid: repo.uid,
          digest,
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          content: Buffer.from(content),
          createTime: time,
        },
        references,
      );
      return digest;
    }

    async function apply(op: Op, w: Awaited<ReturnType<typeof world>>, now: () => number): Promise<void> {
      if (op.kind === "gc") {
        const bounds = { graceStart: now() + 1, windowStart: now() + 1 };
        await store.transaction(async (tx) => {
          await tx.garbage.lockRegistry("exclusive");
          for (const m of await tx.garbage.deadManifests(bounds, 1_000))
            await tx.garbage.deleteIfDead(m.repoUid, m.digest, bounds);
          await tx.garbage.deleteUnreferencedLinks(bounds.graceStart);
          for (const b of await tx.garbage.orphanBlobs(bounds.graceStart, 1_000))
            await tx.garbage.deleteIfOrphan(b.digest, bounds.graceStart);
        });
        return;
      }
      const org = w.orgs[op.org] as (typeof w.orgs)[number];
      if (op.kind === "deleteRepo") {
        const repo = org.repos[op.repo];
        if (!repo) return;
        assert.equal(await store.repos.delete(repo.uid), true);
        org.repos[op.repo] = undefined;
        return;
      }
      const repo = await w.repoOf(op.org, op.repo);
      const time = now();
      switch (op.kind) {
        case "push": {
          const refs: ManifestReference[] = [];
          for (const i of op.layers) {
            const layer = LAYERS[i] as (typeof LAYERS)[number];
            await store.blobs.link(repo.uid, { ...layer, createTime: time }, time);
            refs.push({ digest: layer.digest, kind: "blob" });
          }
          if (op.empty) refs.push({ digest: EMPTY_BLOB_DIGEST, kind: "blob" });
          const digest = await putManifest(repo, JSON.stringify({ v: op.variant, refs }), refs, time);
          if (!w.pushed.includes(digest)) w.pushed.push(digest);
          if (op.tag >= 0) await tagAt(repo, op.tag, digest, time);
          return;
        }
        case "index": {
          const children = await manifestsIn(repo, w.pushed);
          if (children.length === 0) return;
          const refs: ManifestReference[] = children
            .slice(0, 2)
            .map((digest) => ({ digest, kind: "manifest" }));
          const digest = await putManifest(repo, JSON.stringify({ index: refs }), refs, time);
          if (!w.pushed.includes(digest)) w.pushed.push(digest);
          await tagAt(repo, op.tag, digest, time);
          return;
        }
        case "untag": {
          const tag = await store.tags.getByName(repo.uid, `t${op.tag}`);
          if (tag) await store.tags.delete(tag.uid, time);
          return;
        }
        case "deleteManifest": {
          const digests = await manifestsIn(repo, w.pushed);
          const digest = digests[op.pick % Math.max(digests.length, 1)];
          if (digest !== undefined) await store.manifests.delete(repo.uid, digest);
          return;
        }
        case "uploadEmpty":
          await store.blobs.link(repo.uid, { digest: EMPTY_BLOB_DIGEST, size: 2, createTime: time }, time);
          return;
      }
    }

    async function tagAt(repo: RepoRow, tag: number, digest: string, time: number) {
      await store.tags.put({
        repoUid: repo.uid,
        name: `t${tag}`,
        digest,
        deprecated: false,
        newUid: newChildUid(repo.uid),
        now: time,
      });
    }

    /** The digests of the manifests stored in `repo`, among those the run pushed. */
    async function manifestsIn(repo: RepoRow, pushed: readonly string[]): Promise<string[]> {
      const out: string[] = [];
      for (const digest of pushed) if (await store.manifests.has(repo.uid, digest)) out.push(digest);
      return out;
    }

    async function assertCurrent(orgUid: string, context: string) {
      const incremental = (await store.usage.get(orgUid))?.storageBytes ?? 0;
      assert.equal(
        incremental,
        await store.usage.recount(orgUid),
        `incremental usage == recount (${context})`,
      );
    }

    it("a blob's first link racing a manifest commit that counts it before its row exists ends at the blob's size", {
      skip: db.engine === "sqlite" && "SQLite runs one writer at a time: the two cannot interleave",
    }, async () => {
      // A pull-through cache records a manifest before its blobs (ADR 0052). Without the digest
      // lock, the link's transaction misses the manifest's uncommitted count and the count keeps
      // the placeholder size.
      const options = await db.freshOptions();
      const raceStore = await db.open(options);
      const org = groupRow("", "usage-race");
      await raceStore.groups.insert(org);
      const repo = repoRow(org.uid, "cached", T0);
      await raceStore.repos.insert(repo);
      const blob = { digest: sha("usage-race-layer"), size: 5000, createTime: T0 };
      const content = JSON.stringify({ layers: [blob.digest] });
      let counted: () => void = () => {};
      const countedNow = new Promise<void>((resolve) => {
        counted = resolve;
      });
      let release: () => void = () => {};
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      const manifestCommit = raceStore.transaction(async (tx) => {
        await tx.manifests.put(
          {
            repoUid: repo.uid,
            digest: sha(content),
            mediaType: "application/vnd.oci.image.manifest.v1+json",
            content: Buffer.from(content),
            createTime: T0,
          },
          [{ kind: "blob", digest: blob.digest }],
        );
        counted();
        await released;
      });
      await countedNow;
      let linked = false;
      const link = raceStore.blobs.link(repo.uid, blob, T0).then(() => {
        linked = true;
      });
      // The link either finishes now (the race) or waits for the manifest commit's lock.
      const watcher = new pg.Client({ connectionString: options.databaseUrl });
      await watcher.connect();
      try {
        const waiting = async () =>
          (
            await watcher.query<{ n: number }>(
              "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
            )
          ).rows[0]?.n ?? 0;
        const deadline = Date.now() + 10_000;
        while (!linked && (await waiting()) === 0) {
          assert.ok(Date.now() < deadline, "the link neither finished nor waited for a lock");
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      } finally {
        await watcher.end();
      }
      release();
      await manifestCommit;
      await link;
      const recount = await raceStore.usage.recount(org.uid);
      assert.equal(recount, content.length + blob.size);
      assert.equal((await raceStore.usage.get(org.uid))?.storageBytes, recount);
    });

    it("incremental storageBytes equals a full recount after random pushes, deletes and GC", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(OP, { minLength: 1, maxLength: 25 }), async (ops) => {
          let clock = T0;
          const now = () => ++clock;
          const w = await world(now);
          for (const [i, op] of ops.entries()) {
            await apply(op, w, now);
            for (const org of w.orgs) await assertCurrent(org.uid, `after op ${i} ${op.kind}`);
          }
        }),
        { numRuns: db.engine === "sqlite" ? 40 : 15 },
      );
    });

    it("counts a digest shared by repos and tags once, per organization", async () => {
      let clock = T0;
      const now = () => ++clock;
      const w = await world(now);
      const [a, b] = [await w.repoOf(0, 0), await w.repoOf(0, 2)];
      const other = await w.repoOf(1, 0);
      const layer = LAYERS[5] as (typeof LAYERS)[number];
      const refs: ManifestReference[] = [{ digest: layer.digest, kind: "blob" }];
      const content = JSON.stringify({ shared: true });
      for (const repo of [a, b, other]) {
        await store.blobs.link(repo.uid, { ...layer, createTime: now() }, now());
        await putManifest(repo, content, refs, now());
      }
      const expected = layer.size + Buffer.byteLength(content);
      assert.equal((await store.usage.get(w.orgs[0]?.uid ?? ""))?.storageBytes, expected);
      assert.equal((await store.usage.get(w.orgs[1]?.uid ?? ""))?.storageBytes, expected);
      assert.equal(await store.usage.recount(w.orgs[0]?.groups[2] ?? ""), expected, "the folder alone");
      assert.deepEqual(
        await store.usage.counted(w.orgs[0]?.uid ?? "", [layer.digest, sha("nothing")]),
        new Set([layer.digest]),
      );
      assert.deepEqual(await store.usage.counts(w.orgs[0]?.uid ?? ""), { repoCount: 2, tagCount: 0 });
      assert.equal(await store.repos.delete(a.uid), true);
      assert.equal((await store.usage.get(w.orgs[0]?.uid ?? ""))?.storageBytes, expected, "b still holds it");
      assert.equal(await store.repos.delete(b.uid), true);
      assert.equal((await store.usage.get(w.orgs[0]?.uid ?? ""))?.storageBytes, 0);
      assert.equal(
        (await store.usage.get(w.orgs[1]?.uid ?? ""))?.storageBytes,
        expected,
        "the other org is untouched",
      );
    });

    it("sets quota fields given and keeps the others; a row exists before any push", async () => {
      const org = groupRow("", "quota-org");
      await store.groups.insert(org);
      assert.equal(await store.usage.get(org.uid), undefined);
      const set = await store.usage.setQuota(org.uid, { storageBytes: 1_000 }, T0);
      assert.deepEqual(set, {
        orgUid: org.uid,
        storageBytes: 0,
        quotaStorageBytes: 1_000,
        quotaRepoCount: 0,
        updateTime: T0,
      });
      const again = await store.usage.setQuota(org.uid, { repoCount: 3 }, T0 + 1);
      assert.deepEqual([again.quotaStorageBytes, again.quotaRepoCount], [1_000, 3]);
      const cleared = await store.usage.setQuota(org.uid, { storageBytes: 0 }, T0 + 2);
      assert.deepEqual([cleared.quotaStorageBytes, cleared.quotaRepoCount], [0, 3]);
    });

    it("migration 0018 counts what a store held before it", async () => {
      const options = await db.emptyOptions();
      const kysely = connectTo(options);
      const before = Object.keys(migrationsFor(db.engine))
        .filter((name) => name < "0018-usage-quotas")
        .sort()
        .at(-1) as string;
      const org = groupRow("", "old-org");
      const repos = [repoRow(org.uid, "one"), repoRow(org.uid, "two")];
      const layer = LAYERS[4] as (typeof LAYERS)[number];
      const content = Buffer.from(JSON.stringify({ old: true }));
      try {
        await migrateUpTo(kysely, db.engine, before);
        await kysely
          .insertInto("groups")
          .values({
            uid: org.uid,
            parent_uid: "",
            name: org.name,
            description: "",
            verified: db.engine === "sqlite" ? 0 : false,
            create_time: T0,
            update_time: T0,
          })
          .execute();
        await kysely
          .insertInto("blobs")
          .values({ digest: layer.digest, size: layer.size, create_time: T0 })
          .execute();
        for (const repo of repos) {
          await kysely
            .insertInto("repos")
            .values({
              uid: repo.uid,
              parent_uid: org.uid,
              name: repo.name,
              description: "",
              readme: "",
              create_time: T0,
              update_time: T0,
            })
            .execute();
          await kysely
            .insertInto("repo_blobs")
            .values({ repo_uid: repo.uid, digest: layer.digest, create_time: T0 })
            .execute();
          await kysely
            .insertInto("manifests")
            .values({
              repo_uid: repo.uid,
              digest: sha(content.toString()),
              media_type: "application/vnd.oci.image.manifest.v1+json",
              content,
              size: content.byteLength,
              subject_digest: null,
              artifact_type: null,
              annotations: null,
              create_time: T0,
            })
            .execute();
          await kysely
            .insertInto("manifest_references")
            .values([
              {
                repo_uid: repo.uid,
                manifest_digest: sha(content.toString()),
                digest: layer.digest,
                kind: "blob",
              },
              {
                repo_uid: repo.uid,
                manifest_digest: sha(content.toString()),
                digest: EMPTY_BLOB_DIGEST,
                kind: "blob",
              },
            ])
            .execute();
        }
      } finally {
        await kysely.destroy();
      }
      const upgraded = await db.open(options);
      const expected = layer.size + content.byteLength + 2;
      assert.equal(
        (await upgraded.usage.get(org.uid))?.storageBytes,
        expected,
        "backfilled: each digest once",
      );
      assert.equal(await upgraded.usage.recount(org.uid), expected);
      await upgraded.repos.delete(repos[0]?.uid ?? "");
      assert.equal(
        (await upgraded.usage.get(org.uid))?.storageBytes,
        expected,
        "the other repo still holds it all",
      );
      await upgraded.repos.delete(repos[1]?.uid ?? "");
      assert.equal((await upgraded.usage.get(org.uid))?.storageBytes, 0, "backfilled counts go down to zero");
    });
  });
}
