import assert from "node:assert/strict";
import { createHash, randomBytes, randomInt } from "node:crypto";
import { Readable } from "node:stream";
import { after, describe, it } from "node:test";
import { createBlobUploads } from "../../../../src/registry/data-plane/blob-uploads.js";
import {
  createUploadHasher,
  type RunningDigest,
  WORKER_THRESHOLD,
} from "../../../../src/registry/data-plane/upload-hasher.js";
import { type DigestAlgorithm, parseDigest } from "../../../../src/registry/digest.js";
import { createMemoryBlobDriver } from "../../../../src/storage/blobs/memory/memory-blob-driver.js";

const MiB = 1024 * 1024;

/** Feeds `data` in random-sized pieces (1 byte to 3 MiB), honouring the digest's backpressure. */
async function feed(digest: RunningDigest, data: Buffer): Promise<void> {
  for (let offset = 0; offset < data.length; ) {
    const n = Math.min(data.length - offset, randomInt(1, 3 * MiB));
    // The digest may keep nothing of the chunk: overwrite it after feeding, as a reused buffer would be.
    const chunk = Buffer.from(data.subarray(offset, offset + n));
    await digest.update(chunk);
    chunk.fill(0);
    offset += n;
  }
}

const expected = (algorithm: DigestAlgorithm, data: Buffer) =>
  createHash(algorithm).update(data).digest("hex");

describe("upload hasher", () => {
  const hasher = createUploadHasher();
  after(() => hasher.close());

  for (const algorithm of ["sha256", "sha512"] as const) {
    it(`gives crypto's ${algorithm} digest for random chunkings, on the worker and inline`, async () => {
      for (const size of [0, 1, 1000, MiB - 1, 9 * MiB + 17, 20 * MiB + 3]) {
        const data = randomBytes(size);
        const onWorker = hasher.create(algorithm);
        const inline = hasher.create(algorithm, 10);
        await feed(onWorker, data);
        await feed(inline, data);
        assert.equal(await onWorker.digest(), expected(algorithm, data), `worker, ${size} bytes`);
        assert.equal(await inline.digest(), expected(algorithm, data), `inline, ${size} bytes`);
      }
    });
  }

  it("keeps a digest across settles (a chunked upload's requests)", async () => {
    const data = randomBytes(12 * MiB + 5);
    const digest = hasher.create("sha256", WORKER_THRESHOLD);
    for (const [start, end] of [
      [0, 5 * MiB],
      [5 * MiB, 5 * MiB + 1],
      [5 * MiB + 1, data.length],
    ]) {
      await feed(digest, data.subarray(start, end));
      await digest.settle();
    }
    assert.equal(await digest.digest(), expected("sha256", data), "digest over all requests");
  });

  it("runs several digests at once without mixing their bytes", async () => {
    const inputs = Array.from({ length: 4 }, (_, i) => randomBytes(6 * MiB + i));
    const digests = inputs.map(() => hasher.create("sha256"));
    await Promise.all(inputs.map((data, i) => feed(digests[i] as RunningDigest, data)));
    const results = await Promise.all(digests.map((d) => d.digest()));
    assert.deepEqual(
      results,
      inputs.map((data) => expected("sha256", data)),
      "each digest over its own bytes",
    );
  });

  it("reports a lost digest (undefined) when the worker is closed mid-way, and starts a new one", async () => {
    const local = createUploadHasher();
    const digest = local.create("sha256");
    await feed(digest, randomBytes(2 * MiB));
    await local.close();
    assert.equal(await digest.digest(), undefined, "state lost with the worker");
    const again = local.create("sha256");
    const data = randomBytes(MiB);
    await feed(again, data);
    assert.equal(await again.digest(), expected("sha256", data), "a new worker serves new digests");
    await local.close();
  });

  it("forgets a disposed digest, also with bytes in flight", async () => {
    const digest = hasher.create("sha256");
    await feed(digest, randomBytes(3 * MiB));
    digest.dispose();
    const next = hasher.create("sha256");
    const data = randomBytes(2 * MiB);
    await feed(next, data);
    assert.equal(await next.digest(), expected("sha256", data), "later digests are unaffected");
  });
});

describe("uploads hashed on the worker", () => {
  it("verifies sha256 and sha512 monolithic and chunked uploads, and refuses a wrong digest", async () => {
    const blobs = createMemoryBlobDriver();
    const linked: string[] = [];
    const rows = new Map<string, { id: string; size: number }>();
    // Only what blob-uploads touches of the store.
    const store = {
      transaction: async (fn: (tx: unknown) => Promise<unknown>) =>
        fn({
          garbage: { lockRegistry: async () => {} },
          usage: { get: async () => undefined },
          blobs: { link: async (_repo: string, row: { digest: string }) => void linked.push(row.digest) },
        }),
      blobs: { get: async () => undefined },
      uploads: {
        insert: async (row: { id: string; size: number }) => void rows.set(row.id, row),
        advance: async (id: string, from: number, to: number) => {
          const row = rows.get(id);
          if (!row || row.size !== from) return false;
          row.size = to;
          return true;
        },
        delete: async (id: string) => void rows.delete(id),
      },
    } as unknown as Parameters<typeof createBlobUploads>[0]["store"];
    const uploads = createBlobUploads({ store, blobs, clock: { now: () => 0 } });
    try {
      for (const algorithm of ["sha256", "sha512"] as const) {
        const data = randomBytes(9 * MiB + 1);
        const digest = parseDigest(`${algorithm}:${expected(algorithm, data)}`);
        // No declared length: hashed on the worker, like a large body.
        const mono = await uploads.putMonolithic("repo", digest, Readable.from([data]));
        assert.equal(mono.digest, digest.value, `${algorithm} monolithic`);
        await assert.rejects(
          uploads.putMonolithic(
            "repo",
            parseDigest(`${algorithm}:${expected(algorithm, Buffer.from("other"))}`),
            Readable.from([data]),
          ),
          /DIGEST_INVALID|content digest/,
          `${algorithm} wrong digest refused`,
        );
      }
      const data = randomBytes(20 * MiB + 3);
      const upload = await uploads.start("repo", "someone");
      for (let start = 0; start < data.length; start += 8 * MiB) {
        const end = Math.min(start + 8 * MiB, data.length);
        await uploads.append(upload, Readable.from([data.subarray(start, end)]), start);
      }
      const digest = parseDigest(`sha256:${expected("sha256", data)}`);
      assert.equal((await uploads.finish(upload, digest)).digest, digest.value, "chunked upload");
      assert.equal(linked.length, 3, "three blobs linked");

      // The worker dies between a session's chunks: finishing hashes the stored bytes instead.
      const own = createUploadHasher();
      const resumed = createBlobUploads({ store, blobs, clock: { now: () => 0 }, hasher: own });
      const session = await resumed.start("repo", "someone");
      await resumed.append(session, Readable.from([data.subarray(0, 5 * MiB)]), 0);
      await own.close();
      await resumed.append(session, Readable.from([data.subarray(5 * MiB)]), 5 * MiB);
      assert.equal((await resumed.finish(session, digest)).digest, digest.value, "hashed from storage");
      await resumed.close();
    } finally {
      await uploads.close();
      await blobs.close();
    }
  });
});
