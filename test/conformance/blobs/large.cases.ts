import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { BlobFixture } from "./blob-test-backends.js";
import { BigPayload, failingStream, listAll, SOURCE_FAILURE, sha256Of } from "./blob-test-data.js";

const MiB = 1024 * 1024;

/** `global.gc`, exposed at run time (node:test runs without --expose-gc). */
function exposeGc(): () => void {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/** Large streamed objects, compared by SHA-256 (caught s3rver storing aws-chunked framing). */
export function largeCases(fx: BlobFixture): void {
  describe("large objects", () => {
    it("round-trips a 64 MiB streamed put byte-exactly (sha256), whole and ranged", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}blobs/big/data`;
      const payload = new BigPayload(64 * MiB);
      assert.equal(await d.put(key, payload.stream(65_537)), payload.size);
      assert.equal((await d.stat(key))?.size, payload.size);
      assert.equal(await sha256Of(await d.read(key)), await payload.digest());
      const [start, end] = [10 * MiB + 3, 50 * MiB - 5];
      assert.equal(await sha256Of(await d.read(key, { start, end })), await payload.digest(start, end));
      await d.delete(key);
    });

    it("appends large chunks and commits them byte-exactly (sha256)", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      const payload = new BigPayload(13 * MiB + 3);
      // Chunks of 6 MiB, 6 MiB and the rest: S3 can concatenate these server-side (≥ 5 MiB parts).
      const cuts = [0, 6 * MiB, 12 * MiB, payload.size];
      for (let i = 0; i + 1 < cuts.length; i++) {
        assert.equal(await d.append(`${ns}u`, payload.stream(100_003, cuts[i], cuts[i + 1])), cuts[i + 1]);
      }
      assert.equal(await sha256Of(await d.read(`${ns}u`)), await payload.digest());
      const [start, end] = [6 * MiB - 10, 12 * MiB + 10];
      assert.equal(await sha256Of(await d.read(`${ns}u`, { start, end })), await payload.digest(start, end));
      await d.commit(`${ns}u`, `${ns}b`);
      assert.equal(await sha256Of(await d.read(`${ns}b`)), await payload.digest());
      assert.deepEqual(
        (await listAll(d, ns)).map((e) => [e.key, e.size]),
        [[`${ns}b`, payload.size]],
      );
      assert.deepEqual(
        (await fx.rawKeys()).filter((k) => k.startsWith(ns)),
        [`${ns}b`],
      );
      await d.delete(`${ns}b`);
    });

    it("a large put whose source fails after several MiB leaves nothing visible", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      const raw = await fx.rawKeys();
      const chunks = Array.from({ length: 12 }, () => Buffer.alloc(MiB, 7)); // past one S3 part
      await assert.rejects(d.put(`${ns}big`, failingStream(...chunks)), { message: SOURCE_FAILURE });
      assert.equal(await d.stat(`${ns}big`), undefined);
      assert.deepEqual(await listAll(d, ns), []);
      assert.deepEqual(await fx.rawKeys(), raw);
    });

    it("put streams with bounded memory (never buffers the whole source)", {
      skip: fx.kind === "memory" ? "the memory driver keeps objects in memory by design" : false,
    }, async () => {
      const d = fx.driver;
      const total = 160 * MiB;
      const chunk = 256 * 1024;
      const gc = exposeGc();
      gc();
      const baseline = process.memoryUsage().arrayBuffers;
      let peak = baseline;
      let produced = 0;
      // Measures live buffers (after a full GC) every 16 MiB pulled: a driver holding the source
      // would show about the whole object by the end.
      const source = new Readable({
        highWaterMark: MiB,
        read() {
          if (produced % (16 * MiB) === 0) {
            gc();
            peak = Math.max(peak, process.memoryUsage().arrayBuffers);
          }
          if (produced >= total) {
            this.push(null);
            return;
          }
          produced += chunk;
          this.push(Buffer.alloc(chunk, produced & 0xff));
        },
      });
      const key = `${fx.ns()}memory-bound`;
      assert.equal(await d.put(key, source), total);
      // S3 holds (queueSize + 1) × partSize = 50 MiB at most, plus what s3rver (in this process) buffers.
      const limit = fx.kind === "s3" ? 96 * MiB : 32 * MiB;
      const grown = peak - baseline;
      assert.ok(grown < limit, `live buffers grew by ${(grown / MiB).toFixed(1)} MiB while putting 160 MiB`);
      assert.equal((await d.stat(key))?.size, total);
      await d.delete(key);
    });
  });
}
