import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import type { RepoRow } from "../../../src/storage/registry-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { groupRow, repoRow, T0 } from "./fixtures.js";

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

/** Reads every page of `page` with page size 2, so the keyset cursor is exercised. */
async function walk<T>(
  page: (after: string | undefined, limit: number) => Promise<T[]>,
  key: (row: T) => string,
) {
  const all: T[] = [];
  let after: string | undefined;
  for (;;) {
    const rows = await page(after, 2);
    all.push(...rows);
    if (rows.length < 2) return all;
    after = key(rows.at(-1) as T);
  }
}

/** The IntegrityStore walks (`wharf fsck`, `wharf backup`): blobs, references, dangling tags. */
export function integrityCases(db: TestDatabase): void {
  describe("integrity walks", () => {
    let store: Store;
    let a: RepoRow;
    let b: RepoRow;

    before(async () => {
      store = await db.openFresh();
      const g = groupRow("", "integrity-org");
      await store.groups.insert(g);
      a = repoRow(g.uid, "a");
      b = repoRow(g.uid, "b");
      await store.repos.insert(a);
      await store.repos.insert(b);
      // Blobs 1..5 recorded; manifest 100 in a references 1, 2 and 9 (9 has no row); manifest 101
      // in b references 2 and 3; index 102 in a references manifest 100; 4 and 5 are orphans.
      for (const n of [1, 2, 3, 4, 5]) {
        await store.blobs.link(a.uid, { digest: digest(n), size: n * 10, createTime: T0 }, T0);
      }
      const put = (repo: RepoRow, n: number, refs: [number, "blob" | "manifest"][]) =>
        store.manifests.put(
          {
            repoUid: repo.uid,
            digest: digest(n),
            mediaType: "application/vnd.oci.image.manifest.v1+json",
            content: Buffer.from(`{"n":${n}}`),
            createTime: T0,
          },
          refs.map(([d, kind]) => ({ digest: digest(d), kind })),
        );
      await put(a, 100, [
        [1, "blob"],
        [2, "blob"],
        [9, "blob"],
      ]);
      await put(b, 101, [
        [2, "blob"],
        [3, "blob"],
      ]);
      await put(a, 102, [[100, "manifest"]]);
      const tag = (repo: RepoRow, name: string, n: number, uid: string) =>
        store.tags.put({
          repoUid: repo.uid,
          name,
          digest: digest(n),
          deprecated: false,
          newUid: uid,
          now: T0,
        });
      await tag(a, "ok", 100, `${a.uid}/000000000000000a`);
      await tag(a, "gone", 555, `${a.uid}/000000000000000b`);
      await tag(b, "gone-too", 556, `${b.uid}/000000000000000c`);
      await tag(b, "ok", 101, `${b.uid}/000000000000000d`);
    });

    it("walks every blob row in digest order, page by page", async () => {
      const rows = await walk(
        (after, limit) => store.integrity.blobPage(after, limit),
        (r) => r.digest,
      );
      assert.deepEqual(
        rows,
        [1, 2, 3, 4, 5].map((n) => ({ digest: digest(n), size: n * 10, createTime: T0 })),
      );
    });

    it("lists each referenced blob digest once, with its recorded size or none when the row is missing", async () => {
      const rows = await walk(
        (after, limit) => store.integrity.referencedBlobPage(after, limit),
        (r) => r.digest,
      );
      assert.deepEqual(rows, [
        { digest: digest(1), size: 10 },
        { digest: digest(2), size: 20 },
        { digest: digest(3), size: 30 },
        { digest: digest(9), size: undefined },
      ]);
    });

    it("lists blob rows no manifest references as orphans", async () => {
      const rows = await walk(
        (after, limit) => store.integrity.unreferencedBlobPage(after, limit),
        (r) => r.digest,
      );
      assert.deepEqual(
        rows.map((r) => r.digest),
        [digest(4), digest(5)],
      );
    });

    it("lists the tags whose manifest is not in their repo, and only those", async () => {
      const rows = await walk(
        (after, limit) => store.integrity.danglingTagPage(after, limit),
        (r) => r.uid,
      );
      assert.deepEqual(
        rows.map((r) => [r.repoUid, r.name, r.digest]).sort(),
        [
          [a.uid, "gone", digest(555)],
          [b.uid, "gone-too", digest(556)],
        ].sort(),
      );
      // A manifest of that digest in ANOTHER repo does not make a tag whole.
      await store.tags.put({
        repoUid: b.uid,
        name: "elsewhere",
        digest: digest(100),
        deprecated: false,
        newUid: `${b.uid}/000000000000000e`,
        now: T0,
      });
      const again = await walk(
        (after, limit) => store.integrity.danglingTagPage(after, limit),
        (r) => r.uid,
      );
      assert.ok(again.some((r) => r.name === "elsewhere" && r.repoUid === b.uid));
      assert.equal(await store.tags.delete(`${b.uid}/000000000000000e`, T0 + 1), true);
    });

    it("names the manifests referencing a digest, as a blob or a child manifest, in any repo or one", async () => {
      assert.deepEqual(
        await store.integrity.referencingManifests(digest(2)),
        [
          { repoUid: a.uid, digest: digest(100) },
          { repoUid: b.uid, digest: digest(101) },
        ].sort((x, y) => (x.repoUid < y.repoUid ? -1 : 1)),
      );
      assert.deepEqual(await store.integrity.referencingManifests(digest(2), b.uid), [
        { repoUid: b.uid, digest: digest(101) },
      ]);
      assert.deepEqual(await store.integrity.referencingManifests(digest(100)), [
        { repoUid: a.uid, digest: digest(102) },
      ]);
      assert.deepEqual(await store.integrity.referencingManifests(digest(4)), []);
    });
  });
}
