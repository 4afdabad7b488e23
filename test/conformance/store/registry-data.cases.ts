import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import type { ManifestRow, RepoRow } from "../../../src/storage/registry-store.js";
import type { Store } from "../../../src/storage/store.js";
import type { TestDatabase } from "../../support/databases.js";
import { assertDomainError, groupRow, repoRow, T0 } from "./fixtures.js";

const digest = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;

function manifest(repo: RepoRow, n: number, extra: Partial<ManifestRow> = {}): ManifestRow {
  return {
    repoUid: repo.uid,
    digest: digest(n),
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    content: Buffer.from(`{"n":${n}}`),
    createTime: T0,
    ...extra,
  };
}

/** Blob records and links, manifests with references and referrers, upload sessions. */
export function registryDataCases(db: TestDatabase): void {
  describe("registry data", () => {
    let store: Store;
    let group: string;
    const newRepo = async (name: string) => {
      const repo = repoRow(group, name);
      await store.repos.insert(repo);
      return repo;
    };

    before(async () => {
      store = await db.openFresh();
      const g = groupRow("", "oci-org");
      await store.groups.insert(g);
      group = g.uid;
    });

    it("links a blob to repos idempotently; unlinking hides it from that repo only", async () => {
      const [a, b] = [await newRepo("blob-a"), await newRepo("blob-b")];
      const blob = { digest: digest(1), size: 123_456_789_012, createTime: T0 };
      assert.equal(await store.blobs.get(blob.digest), undefined);
      assert.equal(await store.blobs.anyRecorded(), false, "a fresh store records no blob");
      await store.blobs.link(a.uid, blob, T0);
      await store.blobs.link(a.uid, { ...blob, createTime: T0 + 9 }, T0 + 9);
      assert.deepEqual(await store.blobs.get(blob.digest), blob);
      assert.deepEqual(await store.blobs.getLinked(a.uid, blob.digest), blob);
      assert.equal(await store.blobs.getLinked(b.uid, blob.digest), undefined);
      await store.blobs.link(b.uid, blob, T0 + 1);
      assert.equal(await store.blobs.anyRecorded(), true);
      assert.equal(await store.blobs.unlink(a.uid, blob.digest), true);
      assert.equal(await store.blobs.unlink(a.uid, blob.digest), false);
      assert.equal(await store.blobs.getLinked(a.uid, blob.digest), undefined);
      assert.deepEqual(await store.blobs.getLinked(b.uid, blob.digest), blob);
    });

    it("refuses to link a blob to a missing repo with NOT_FOUND and records nothing", async () => {
      const ghost = repoRow(group, "ghost");
      await assertDomainError(
        store.blobs.link(ghost.uid, { digest: digest(2), size: 1, createTime: T0 }, T0),
        Code.NotFound,
      );
      assert.equal(await store.blobs.get(digest(2)), undefined);
    });

    it("stores manifests byte-exact with their references; a second put of a digest keeps the first", async () => {
      const repo = await newRepo("manifests");
      const row = manifest(repo, 10, { annotations: { "org.example": "x" }, artifactType: "a/b" });
      await store.manifests.put(row, [
        { digest: digest(11), kind: "blob" },
        { digest: digest(12), kind: "blob" },
        { digest: digest(11), kind: "blob" },
      ]);
      await store.manifests.put({ ...row, createTime: T0 + 5 }, [{ digest: digest(13), kind: "blob" }]);
      const got = await store.manifests.get(repo.uid, row.digest);
      assert.ok(got);
      assert.deepEqual(Buffer.from(got.content), Buffer.from(row.content));
      assert.deepEqual({ ...got, content: undefined }, { ...row, content: undefined });
      assert.equal(await store.manifests.has(repo.uid, row.digest), true);
      assert.equal(await store.manifests.has(repo.uid, digest(99)), false);
      assert.deepEqual(await store.manifests.referencedBy(repo.uid, digest(11)), [row.digest]);
      assert.deepEqual(await store.manifests.referencedBy(repo.uid, digest(13)), []);
      assert.equal(await store.manifests.delete(repo.uid, row.digest), true);
      assert.equal(await store.manifests.delete(repo.uid, row.digest), false);
      assert.deepEqual(await store.manifests.referencedBy(repo.uid, digest(11)), []);
    });

    it("keeps a binary manifest body intact", async () => {
      const repo = await newRepo("binary");
      const content = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      await store.manifests.put(manifest(repo, 20, { content }), []);
      const got = await store.manifests.get(repo.uid, digest(20));
      assert.deepEqual(Buffer.from(got?.content ?? []), content);
    });

    it("lists referrers of a subject by digest, filtered by artifact type, within the repo", async () => {
      const [repo, other] = [await newRepo("referrers"), await newRepo("referrers-other")];
      const subject = digest(30);
      await store.manifests.put(manifest(repo, 33, { subjectDigest: subject, artifactType: "sig" }), []);
      await store.manifests.put(
        manifest(repo, 31, { subjectDigest: subject, artifactType: "sbom", annotations: { k: "v" } }),
        [],
      );
      await store.manifests.put(manifest(repo, 32), []);
      await store.manifests.put(manifest(other, 34, { subjectDigest: subject, artifactType: "sig" }), []);
      const all = await store.manifests.referrers(repo.uid, subject);
      assert.deepEqual(
        all.map((r) => [r.digest, r.artifactType, r.size]),
        [
          [digest(31), "sbom", Buffer.byteLength('{"n":31}')],
          [digest(33), "sig", Buffer.byteLength('{"n":33}')],
        ],
      );
      assert.deepEqual(all[0]?.annotations, { k: "v" });
      assert.deepEqual(
        (await store.manifests.referrers(repo.uid, subject, "sig")).map((r) => r.digest),
        [digest(33)],
      );
      assert.deepEqual(await store.manifests.referrers(repo.uid, digest(99)), []);
    });

    it("refuses a manifest in a missing repo with NOT_FOUND", async () => {
      await assertDomainError(store.manifests.put(manifest(repoRow(group, "nope"), 40), []), Code.NotFound);
    });

    it("tracks upload sessions with optimistic size advances", async () => {
      const repo = await newRepo("uploads");
      const row = {
        id: "u-1",
        repoUid: repo.uid,
        identityUid: "me",
        size: 0,
        createTime: T0,
        updateTime: T0,
      };
      await store.uploads.insert(row);
      assert.deepEqual(await store.uploads.get("u-1"), row);
      assert.equal(await store.uploads.advance("u-1", 0, 10, T0 + 1), true);
      assert.equal(await store.uploads.advance("u-1", 0, 20, T0 + 2), false);
      assert.deepEqual(await store.uploads.get("u-1"), { ...row, size: 10, updateTime: T0 + 1 });
      assert.deepEqual(
        (await store.uploads.staleBefore(T0 + 2)).map((u) => u.id),
        ["u-1"],
      );
      assert.deepEqual(await store.uploads.staleBefore(T0 + 1), []);
      assert.equal(await store.uploads.delete("u-1"), true);
      assert.equal(await store.uploads.delete("u-1"), false);
      await assertDomainError(
        store.uploads.insert({ ...row, id: "u-2", repoUid: repoRow(group, "x").uid }),
        Code.NotFound,
      );
    });

    it("deleting a repo removes its links, manifests and uploads but keeps blob rows", async () => {
      const repo = await newRepo("cascade");
      const blob = { digest: digest(50), size: 5, createTime: T0 };
      await store.blobs.link(repo.uid, blob, T0);
      await store.manifests.put(manifest(repo, 51), [{ digest: blob.digest, kind: "blob" }]);
      await store.uploads.insert({
        id: "u-c",
        repoUid: repo.uid,
        identityUid: "me",
        size: 0,
        createTime: T0,
        updateTime: T0,
      });
      assert.equal(await store.repos.delete(repo.uid), true);
      assert.equal(await store.manifests.get(repo.uid, digest(51)), undefined);
      assert.equal(await store.uploads.get("u-c"), undefined);
      assert.deepEqual(await store.blobs.get(blob.digest), blob);
    });
  });
}
