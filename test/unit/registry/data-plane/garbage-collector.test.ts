import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { after, before, describe, it } from "node:test";
import type { Clock } from "../../../../src/core/clock.js";
import { newChildUid, newRootUid } from "../../../../src/core/uidp.js";
import { toOciError } from "../../../../src/oci/oci-errors.js";
import { type BlobUploads, createBlobUploads } from "../../../../src/registry/data-plane/blob-uploads.js";
import { collectGarbage } from "../../../../src/registry/data-plane/garbage-collector.js";
import { commitManifest } from "../../../../src/registry/data-plane/manifest-commit.js";
import { parseDigest, sha256Digest } from "../../../../src/registry/digest.js";
import { OCI_INDEX, OCI_MANIFEST, parseManifest } from "../../../../src/registry/manifest-parser.js";
import { bindBlobStore } from "../../../../src/storage/blob-store-identity.js";
import type { BlobDriver } from "../../../../src/storage/blobs/blob-driver.js";
import { BLOB_STORE_ID_KEY, blobKey } from "../../../../src/storage/blobs/blob-layout.js";
import { createMemoryBlobDriver } from "../../../../src/storage/blobs/memory/memory-blob-driver.js";
import type { RepoRow } from "../../../../src/storage/registry-store.js";
import type { Store } from "../../../../src/storage/store.js";
import { forEachEngine } from "../../../support/databases.js";

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

/** A clock the test moves by hand. */
function manualClock(start: number): Clock & { advance(ms: number): void } {
  let now = start;
  return { now: () => now, advance: (ms) => (now += ms) };
}

forEachEngine("garbage collection", (db) => {
  let store: Store;
  let blobs: BlobDriver;
  let repo: RepoRow;
  const clock = manualClock(Date.UTC(2026, 0, 1));

  // One for the suite: each has a hashing worker thread of its own, stopped by close().
  let uploads: BlobUploads;
  async function pushBlob(content: string): Promise<string> {
    const digest = sha256Digest(Buffer.from(content));
    await uploads.putMonolithic(repo.uid, parseDigest(digest), Readable.from([Buffer.from(content)]));
    return digest;
  }
  async function pushImage(
    layerContents: string[],
    opts: { tag?: string; subject?: string } = {},
  ): Promise<string> {
    const config = await pushBlob(`config of ${layerContents.join("+")}`);
    const layers = [];
    for (const content of layerContents)
      layers.push({
        mediaType: "application/octet-stream",
        digest: await pushBlob(content),
        size: content.length,
      });
    const doc = {
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: "application/vnd.oci.image.config.v1+json", digest: config, size: 1 },
      layers,
      ...(opts.subject ? { subject: { mediaType: OCI_MANIFEST, digest: opts.subject, size: 1 } } : {}),
    };
    return putManifest(doc, OCI_MANIFEST, opts.tag);
  }
  async function putManifest(doc: unknown, mediaType: string, tag?: string): Promise<string> {
    const content = Buffer.from(JSON.stringify(doc));
    const digest = sha256Digest(content);
    const parsed = parseManifest(content, mediaType);
    await commitManifest(store, {
      repo,
      name: "gc/app",
      digest,
      content,
      parsed,
      ...(tag ? { tag } : {}),
      now: clock.now(),
    });
    return digest;
  }
  const blobStored = async (digest: string) =>
    (await store.blobs.get(digest)) !== undefined &&
    (await blobs.stat(blobKey(parseDigest(digest)))) !== undefined;
  const collect = (graceMs = HOUR, historyWindowMs = 30 * DAY) =>
    collectGarbage({ store, blobs, clock }, { graceMs, historyWindowMs });

  before(async () => {
    store = await db.openFresh();
    blobs = createMemoryBlobDriver();
    uploads = createBlobUploads({ store, blobs, clock });
    const org = {
      uid: newRootUid(),
      name: "gc",
      description: "",
      verified: false,
      createTime: 0,
      updateTime: 0,
    };
    await store.groups.insert(org);
    repo = {
      uid: newChildUid(org.uid),
      groupUid: org.uid,
      name: "app",
      description: "",
      readme: "",
      createTime: 0,
      updateTime: 0,
    };
    await store.repos.insert(repo);
  });
  after(() => uploads?.close());

  describe("liveness rules", () => {
    it("keeps tagged images and young untagged ones; removes old untagged ones and the blobs only they used", async () => {
      const tagged = await pushImage(["shared", "tagged-only"], { tag: "live" });
      const untagged = await pushImage(["shared", "untagged-only"]);
      const young = await pushImage(["young-only"]);
      clock.advance(2 * HOUR);
      const youngest = await pushImage(["youngest-only"]);
      const report = await collect();
      assert.equal(await store.manifests.has(repo.uid, tagged), true);
      assert.equal(await store.manifests.has(repo.uid, untagged), false);
      assert.equal(await store.manifests.has(repo.uid, young), false, "2 h old is past the 1 h grace");
      assert.equal(await store.manifests.has(repo.uid, youngest), true, "within the grace");
      assert.equal(await blobStored(sha256Digest(Buffer.from("shared"))), true);
      assert.equal(await blobStored(sha256Digest(Buffer.from("tagged-only"))), true);
      assert.equal(await blobStored(sha256Digest(Buffer.from("untagged-only"))), false);
      assert.equal(await blobStored(sha256Digest(Buffer.from("young-only"))), false);
      assert.equal(await blobStored(sha256Digest(Buffer.from("youngest-only"))), true);
      assert.ok(report.manifests >= 2 && report.blobs >= 2 && report.bytes > 0, JSON.stringify(report));
      assert.deepEqual(await collect(), {
        manifests: 0,
        links: 0,
        blobs: 0,
        bytes: 0,
        uploads: 0,
        strayObjects: 0,
      });
    });

    it("keeps what the tag history window names, including what a tag pointed to when the window starts", async () => {
      const ancient = await pushImage(["ancient"], { tag: "moving" });
      clock.advance(3 * DAY);
      const atWindowStart = await pushImage(["at-window-start"], { tag: "moving" });
      clock.advance(30 * DAY);
      const recentPast = await pushImage(["recent-past"], { tag: "moving" });
      clock.advance(HOUR);
      const current = await pushImage(["current"], { tag: "moving" });
      clock.advance(2 * HOUR);
      await collect(HOUR, 30 * DAY);
      assert.equal(await store.manifests.has(repo.uid, ancient), false, "left the tag 33 days ago");
      assert.equal(
        await store.manifests.has(repo.uid, atWindowStart),
        true,
        "current when the window starts",
      );
      assert.equal(await store.manifests.has(repo.uid, recentPast), true);
      assert.equal(await store.manifests.has(repo.uid, current), true);
      assert.equal(await blobStored(sha256Digest(Buffer.from("ancient"))), false);
      assert.equal(await blobStored(sha256Digest(Buffer.from("at-window-start"))), true);
    });

    it("keeps an index's children and a subject's referrers while they live, then frees them together", async () => {
      const child = await pushImage(["child-layer"]);
      const index = await putManifest(
        {
          schemaVersion: 2,
          mediaType: OCI_INDEX,
          manifests: [
            {
              mediaType: OCI_MANIFEST,
              digest: child,
              size: 1,
              platform: { architecture: "amd64", os: "linux" },
            },
          ],
        },
        OCI_INDEX,
        "multi",
      );
      const signature = await pushImage(["signature-layer"], { subject: index });
      clock.advance(2 * HOUR);
      await collect();
      for (const digest of [child, index, signature])
        assert.equal(await store.manifests.has(repo.uid, digest), true);
      const tag = await store.tags.getByName(repo.uid, "multi");
      await store.tags.delete(tag?.uid ?? "", clock.now());
      clock.advance(31 * DAY);
      await collect();
      for (const digest of [child, index, signature])
        assert.equal(await store.manifests.has(repo.uid, digest), false);
      assert.equal(await blobStored(sha256Digest(Buffer.from("child-layer"))), false);
    });

    it("removes abandoned upload sessions and stray upload objects, keeping recent ones", async () => {
      const stale = await uploads.start(repo.uid, "someone");
      await uploads.append(stale, Readable.from([Buffer.from("partial")]));
      await blobs.append("uploads/0123456789abcdef0123456789abcdef", Readable.from([Buffer.from("stray")]));
      clock.advance(2 * DAY);
      const fresh = await uploads.start(repo.uid, "someone");
      const report = await collect();
      assert.equal(report.uploads, 1);
      assert.equal(await store.uploads.get(stale.id), undefined);
      assert.equal(await blobs.stat(`uploads/${stale.id}`), undefined);
      assert.ok((await store.uploads.get(fresh.id)) !== undefined, "a fresh session stays");
      // Stray objects are judged by their storage mtime (wall-clock time).
      assert.ok(await blobs.stat("uploads/0123456789abcdef0123456789abcdef"), "a recent stray object stays");
      const later = await collectGarbage({ store, blobs, clock: { now: () => Date.now() + 2 * DAY } }, {});
      assert.equal(await blobs.stat("uploads/0123456789abcdef0123456789abcdef"), undefined);
      assert.ok(later.strayObjects >= 1, JSON.stringify(later));
    });
  });

  it("never races with concurrent pushes: a tagged manifest always has its blobs", async () => {
    for (let round = 0; round < 12; round++) {
      clock.advance(HOUR);
      const push = async () => {
        for (let attempt = 0; ; attempt++) {
          try {
            return await pushImage(["race-shared", `race-${round}`], { tag: "race" });
          } catch (err) {
            // GC removed a blob between its upload and the manifest: upload again, as a client does.
            if (attempt > 5 || toOciError(err).code !== "MANIFEST_BLOB_UNKNOWN") throw err;
          }
        }
      };
      // Grace 0 and window 0: everything not tagged right now is garbage.
      const [digest] = await Promise.all([push(), collect(0, 0), collect(0, 0)]);
      await collect(0, 0);
      const manifest = await store.manifests.get(repo.uid, digest);
      assert.ok(manifest, `round ${round}: the tagged manifest survived`);
      const parsed = parseManifest(manifest.content, manifest.mediaType);
      for (const ref of parsed.references) {
        assert.ok(
          await blobStored(ref.digest),
          `round ${round}: blob ${ref.digest} of the tagged manifest is stored`,
        );
        assert.ok(await store.blobs.getLinked(repo.uid, ref.digest), `round ${round}: and linked`);
      }
    }
  });

  it("a dry run reports exactly what the run then removes, removing nothing", async () => {
    const farFuture = { now: () => Date.now() + 400 * DAY };
    const run = (dryRun: boolean) =>
      collectGarbage({ store, blobs, clock: farFuture }, { graceMs: 0, historyWindowMs: 0, dryRun });
    await run(false); // what earlier tests left
    const child = await pushImage(["dry-child"]);
    const index = await putManifest(
      {
        schemaVersion: 2,
        mediaType: OCI_INDEX,
        manifests: [{ mediaType: OCI_MANIFEST, digest: child, size: 1 }],
      },
      OCI_INDEX,
      "dry",
    );
    const signature = await pushImage(["dry-signature"], { subject: index });
    const plain = await pushImage(["dry-plain"]);
    const tag = await store.tags.getByName(repo.uid, "dry");
    await store.tags.delete(tag?.uid ?? "", clock.now());
    const stale = await uploads.start(repo.uid, "someone");
    await uploads.append(stale, Readable.from([Buffer.from("dry partial")]));
    const strayBlob = blobKey(parseDigest(sha256Digest(Buffer.from("dry stray blob"))));
    const strayUpload = "uploads/fedcba9876543210fedcba9876543210";
    await blobs.put(strayBlob, Readable.from([Buffer.from("dry stray blob")]));
    await blobs.put(strayUpload, Readable.from([Buffer.from("dry stray upload")]));

    const preview = await run(true);
    // The child and the referrer die only once the index is gone: the dry run follows the cascade.
    assert.equal(preview.manifests, 4, JSON.stringify(preview));
    assert.ok(preview.blobs >= 6 && preview.bytes > 0 && preview.links >= 6, JSON.stringify(preview));
    assert.equal(preview.uploads, 1);
    assert.equal(preview.strayObjects, 2, "each stray object once (not the session's own object again)");
    for (const digest of [child, index, signature, plain])
      assert.equal(await store.manifests.has(repo.uid, digest), true, "no manifest removed");
    for (const content of ["dry-child", "dry-signature", "dry-plain"])
      assert.equal(await blobStored(sha256Digest(Buffer.from(content))), true, `${content} still stored`);
    assert.ok(await store.uploads.get(stale.id), "the session is still there");
    assert.ok(await blobs.stat(`uploads/${stale.id}`), "and its bytes");
    assert.ok(await blobs.stat(strayBlob));
    assert.ok(await blobs.stat(strayUpload));

    assert.deepEqual(await run(false), preview, "the run removes what the dry run reported");
    assert.equal(await store.manifests.has(repo.uid, child), false);
  });

  it("never sweeps the blob store's identity object, however old", async () => {
    const id = await bindBlobStore(store, blobs, { database: "test", blobStore: "memory:" });
    const farFuture = { now: () => Date.now() + 400 * DAY };
    await collectGarbage({ store, blobs, clock: farFuture }, { graceMs: 0, historyWindowMs: 0 });
    assert.ok(await blobs.stat(BLOB_STORE_ID_KEY), "the identity object is still there");
    assert.equal(await bindBlobStore(store, blobs, { database: "test", blobStore: "memory:" }), id);
  });

  it("never takes a foreign object under blobs/ or uploads/ for a blob or an upload, however old", async () => {
    const hex = sha256Digest(Buffer.from("foreign")).slice("sha256:".length);
    const foreign = [
      "blobs/README",
      `blobs/sha256/${hex.slice(0, 2)}/${hex}/data`,
      `blobs/sha256/zz/${hex}`,
      `blobs/sha256/${hex.slice(0, 2)}/${hex.toUpperCase()}`,
      `blobs/sha256/${hex.slice(0, 2)}/${hex.slice(0, 40)}`,
      `blobs/md5/${hex.slice(0, 2)}/${hex.slice(0, 32)}`,
      "uploads/notes",
      `uploads/${hex.slice(0, 32)}.partial`,
      `uploads/${hex.slice(32, 64)}/data`,
      `uploads/${hex.slice(0, 31)}`,
      `uploads/${hex.slice(0, 32).toUpperCase()}`,
    ];
    for (const key of foreign) await blobs.put(key, Readable.from([Buffer.from("not wharf's")]));
    // Objects of the layout that nothing references, so the same run shows that both sweeps ran.
    const strayBlob = blobKey(parseDigest(sha256Digest(Buffer.from("stray blob"))));
    const strayUpload = `uploads/${hex.slice(16, 48)}`;
    await blobs.put(strayBlob, Readable.from([Buffer.from("stray blob")]));
    await blobs.put(strayUpload, Readable.from([Buffer.from("stray upload")]));
    const farFuture = { now: () => Date.now() + 400 * DAY };
    const report = await collectGarbage(
      { store, blobs, clock: farFuture },
      { graceMs: 0, historyWindowMs: 0 },
    );
    for (const key of foreign) assert.ok(await blobs.stat(key), `${key} is still there`);
    assert.equal(await blobs.stat(strayBlob), undefined, "a stray blob object is swept");
    assert.equal(await blobs.stat(strayUpload), undefined, "a stray upload object is swept");
    assert.equal(report.strayObjects, 2, JSON.stringify(report));
  });
});
