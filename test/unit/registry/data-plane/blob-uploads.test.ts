import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { before, it } from "node:test";
import { newChildUid, newRootUid } from "../../../../src/core/uidp.js";
import { toOciError } from "../../../../src/oci/oci-errors.js";
import { type BlobUploads, createBlobUploads } from "../../../../src/registry/data-plane/blob-uploads.js";
import { parseDigest, sha256Digest } from "../../../../src/registry/digest.js";
import type { BlobDriver } from "../../../../src/storage/blobs/blob-driver.js";
import { blobKey } from "../../../../src/storage/blobs/blob-layout.js";
import { createMemoryBlobDriver } from "../../../../src/storage/blobs/memory/memory-blob-driver.js";
import type { RepoRow } from "../../../../src/storage/registry-store.js";
import type { Store } from "../../../../src/storage/store.js";
import { forEachEngine } from "../../../support/databases.js";

// Sessions a crash left inconsistent (their row and their stored bytes disagree) end with a clean
// OCI error instead of corrupting a blob or failing with INTERNAL.

forEachEngine("upload sessions after a crash", (db) => {
  let store: Store;
  let blobs: BlobDriver;
  let uploads: BlobUploads;
  let repo: RepoRow;
  const content = Buffer.from("the bytes of a blob whose session was cut off");
  const digest = parseDigest(sha256Digest(content));

  before(async () => {
    store = await db.openFresh();
    blobs = createMemoryBlobDriver();
    uploads = createBlobUploads({ store, blobs, clock: { now: () => 1 } });
    const org = {
      uid: newRootUid(),
      name: "acme",
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

  /** A session holding `content`, as a fresh process (no running hash) finds it after a restart. */
  async function restartedSession() {
    const started = await uploads.start(repo.uid, newRootUid());
    await uploads.append(started, Readable.from([content]));
    const restarted = createBlobUploads({ store, blobs, clock: { now: () => 2 } });
    return { restarted, row: (await restarted.get(started.id)) ?? assert.fail("session row missing") };
  }

  // The data plane throws domain errors; the registry answers them with these OCI codes.
  const rejectsWith = (code: string) => (err: unknown) => toOciError(err).code === code;

  it("answers BLOB_UPLOAD_UNKNOWN when a finish moved the bytes but died before linking them", async () => {
    const { restarted, row } = await restartedSession();
    // What a kill between the move and the link's commit leaves: the row, and no session bytes.
    await blobs.commit(`uploads/${row.id}`, blobKey(digest));
    await assert.rejects(restarted.finish(row, digest), rejectsWith("BLOB_UPLOAD_UNKNOWN"));
    assert.equal(await store.uploads.get(row.id), undefined, "the session is over");
    assert.equal(await store.blobs.getLinked(repo.uid, digest.value), undefined, "nothing was linked");
    // Starting again works, reusing the stray bytes.
    const again = await restarted.putMonolithic(repo.uid, digest, Readable.from([content]));
    assert.equal(again.digest, digest.value);
    await restarted.close();
  });

  it("answers BLOB_UPLOAD_INVALID when a cut-off chunk left bytes past the recorded size", async () => {
    const { restarted, row } = await restartedSession();
    await blobs.append(`uploads/${row.id}`, Readable.from([Buffer.from("half a chunk")]));
    await assert.rejects(restarted.finish(row, digest), rejectsWith("BLOB_UPLOAD_INVALID"));
    assert.equal(await store.uploads.get(row.id), undefined, "the session is over");
    assert.equal(await blobs.stat(`uploads/${row.id}`), undefined, "its bytes are dropped");
    const { restarted: other, row: second } = await restartedSession();
    await blobs.append(`uploads/${second.id}`, Readable.from([Buffer.from("half a chunk")]));
    await assert.rejects(
      other.append(second, Readable.from([Buffer.from("more")])),
      rejectsWith("BLOB_UPLOAD_INVALID"),
    );
    assert.equal(await store.uploads.get(second.id), undefined);
    await Promise.all([restarted.close(), other.close()]);
  });

  it("finishes an intact session continued after a restart, hashing the stored bytes", async () => {
    const { restarted, row } = await restartedSession();
    const blob = await restarted.finish(row, digest);
    assert.equal(blob.digest, digest.value);
    assert.ok(await store.blobs.getLinked(repo.uid, digest.value));
    await restarted.close();
  });
});
