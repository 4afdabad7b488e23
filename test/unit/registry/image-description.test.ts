import assert from "node:assert/strict";
import { PassThrough, type Readable } from "node:stream";
import { describe, it } from "node:test";
import { deadlineExceeded } from "../../../src/core/cancellation.js";
import { describeImage } from "../../../src/registry/image-description.js";
import type { BlobDriver } from "../../../src/storage/blobs/blob-driver.js";
import type { Store } from "../../../src/storage/store.js";

const REPO = "0000000000000000000000000000000000000001/0000000000000001";
const DIGEST = `sha256:${"b".repeat(64)}`;
const CONFIG = {
  mediaType: "application/vnd.oci.image.config.v1+json",
  digest: `sha256:${"a".repeat(64)}`,
  size: 64,
};
const MANIFEST = {
  schemaVersion: 2,
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: CONFIG,
  layers: [],
};

/** A store holding the repo and its one image manifest; counts the reads. */
function storeWithManifest(): { store: Store; reads: () => number } {
  let reads = 0;
  const store = {
    repos: {
      get: async () => {
        reads++;
        return { uid: REPO };
      },
    },
    manifests: {
      get: async () => {
        reads++;
        return {
          repoUid: REPO,
          digest: DIGEST,
          mediaType: MANIFEST.mediaType,
          content: Buffer.from(JSON.stringify(MANIFEST)),
          createTime: 0,
        };
      },
    },
  };
  return { store: store as unknown as Store, reads: () => reads };
}

/** A blob driver whose reads hand out `stream`. */
function blobsServing(stream: () => Readable): BlobDriver {
  return { read: async () => stream() } as unknown as BlobDriver;
}

/** Rejects when `promise` has not settled within `ms` (a read that was never stopped). */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms),
    ),
  ]);
}

describe("describeImage and the call's signal", () => {
  it("reads the architecture from the config blob while the signal stays quiet", async () => {
    const { store } = storeWithManifest();
    const config = Buffer.from(JSON.stringify({ architecture: "arm64", os: "linux" }));
    const blobs = blobsServing(() => new PassThrough().end(config));
    const platforms = await describeImage({ store, blobs }, REPO, DIGEST, new AbortController().signal);
    assert.deepEqual(
      platforms.map((p) => [p.architecture, p.os]),
      [["arm64", "linux"]],
    );
  });

  it("a config blob read that stalls is destroyed when the signal fires, and the call rejects with its reason", async () => {
    const { store } = storeWithManifest();
    const stalled = new PassThrough();
    stalled.write('{"architecture":'); // and nothing more: a slow blob store
    const controller = new AbortController();
    const described = describeImage(
      { store, blobs: blobsServing(() => stalled) },
      REPO,
      DIGEST,
      controller.signal,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const reason = deadlineExceeded();
    controller.abort(reason);
    await assert.rejects(within(described, 2000), (err) => err === reason);
    assert.equal(stalled.destroyed, true, "the blob stream was destroyed (its file or connection freed)");
  });

  it("a signal that already fired stops it before any store read", async () => {
    const { store, reads } = storeWithManifest();
    const controller = new AbortController();
    const reason = deadlineExceeded();
    controller.abort(reason);
    await assert.rejects(
      describeImage({ store, blobs: blobsServing(() => new PassThrough()) }, REPO, DIGEST, controller.signal),
      (err) => err === reason,
    );
    assert.equal(reads(), 0, "no store read");
  });
});
