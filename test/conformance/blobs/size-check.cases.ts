import assert from "node:assert/strict";
import { PassThrough, Writable } from "node:stream";
import { describe, it } from "node:test";
import { BlobSizeMismatchError } from "../../../src/storage/blobs/blob-driver.js";
import type { BlobFixture } from "./blob-test-backends.js";
import { bytes, readAll, streamOf } from "./blob-test-data.js";

/** A sink that records whether anything was written to it. */
function watchedSink(): Writable & { written: number } {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      sink.written += chunk.length;
      callback();
    },
  }) as Writable & { written: number };
  sink.written = 0;
  return sink;
}

/**
 * Reads that know the size the metadata records (`expect`): an object of another size (truncated,
 * extended) is refused with BlobSizeMismatchError before any byte is handed out, on every path
 * (whole object, range, appendable object); the right size reads as usual.
 */
export function sizeCheckCases(fx: BlobFixture): void {
  describe("expected size", () => {
    it("reads and pipes the whole object and a range when its size is the expected one", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}blob`;
      const data = bytes(5000, 7);
      await d.put(key, streamOf(data));
      assert.deepEqual(await readAll(await d.read(key, undefined, { size: 5000 })), data);
      assert.deepEqual(
        await readAll(await d.read(key, { start: 10, end: 20 }, { size: 5000 })),
        data.subarray(10, 20),
      );
      const sink = new PassThrough();
      const collected = readAll(sink);
      await d.pipeTo(key, sink, undefined, { size: 5000 });
      assert.deepEqual(await collected, data);
    });

    it("refuses a shorter or longer object before writing anything, naming both sizes", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}blob`;
      await d.put(key, streamOf(bytes(1000)));
      for (const expected of [1001, 999, 0]) {
        const sink = watchedSink();
        const err = await d.pipeTo(key, sink, undefined, { size: expected }).then(
          () => assert.fail("pipeTo accepted a wrong size"),
          (e: unknown) => e,
        );
        assert.ok(err instanceof BlobSizeMismatchError, String(err));
        assert.equal(err.key, key);
        assert.equal(err.expectedSize, expected);
        assert.equal(err.storedSize, 1000);
        assert.equal(sink.written, 0, "nothing written before the refusal");
        assert.equal(sink.destroyed, false, "the sink is left for the caller to answer an error");
        await assert.rejects(d.read(key, undefined, { size: expected }), BlobSizeMismatchError);
        await assert.rejects(d.read(key, { start: 1, end: 5 }, { size: expected }), BlobSizeMismatchError);
      }
    });

    it("checks an appendable object's total size", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}upload`;
      await d.append(key, streamOf(bytes(300)));
      await d.append(key, streamOf(bytes(200, 1)));
      assert.equal((await readAll(await d.read(key, undefined, { size: 500 }))).length, 500);
      await assert.rejects(d.read(key, undefined, { size: 300 }), BlobSizeMismatchError);
    });

    it("rejects a malformed expected size with RangeError before any I/O", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}missing`;
      for (const size of [-1, 1.5, Number.NaN]) {
        await assert.rejects(d.read(key, undefined, { size }), (e: unknown) => e instanceof RangeError);
        await assert.rejects(d.pipeTo(key, watchedSink(), undefined, { size }), RangeError);
      }
    });
  });
}
