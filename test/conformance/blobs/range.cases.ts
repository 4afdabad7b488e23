import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BlobRangeError } from "../../../src/storage/blobs/blob-driver.js";
import type { BlobFixture } from "./blob-test-backends.js";
import { bytes, readBytes, streamOf } from "./blob-test-data.js";

/** Ranged reads: `{start, end}` with `end` exclusive, on plain and appendable objects. */
export function rangeCases(fx: BlobFixture): void {
  describe("ranged reads", () => {
    const data = bytes(1000, 5);

    it("reads from start to the end", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}r`;
      await d.put(key, streamOf(data));
      assert.deepEqual(await readBytes(d, key, { start: 0 }), data);
      assert.deepEqual(await readBytes(d, key, { start: 1 }), data.subarray(1));
      assert.deepEqual(await readBytes(d, key, { start: 999 }), data.subarray(999));
    });

    it("reads [start, end) with end exclusive", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}r`;
      await d.put(key, streamOf(data));
      assert.deepEqual(await readBytes(d, key, { start: 0, end: 1 }), data.subarray(0, 1));
      assert.deepEqual(await readBytes(d, key, { start: 10, end: 20 }), data.subarray(10, 20));
      assert.deepEqual(await readBytes(d, key, { start: 0, end: 1000 }), data);
      assert.deepEqual(await readBytes(d, key, { start: 999, end: 1000 }), data.subarray(999));
    });

    it("clamps an end beyond the size", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}r`;
      await d.put(key, streamOf(data));
      assert.deepEqual(await readBytes(d, key, { start: 990, end: 5000 }), data.subarray(990));
      assert.deepEqual(await readBytes(d, key, { start: 0, end: 1001 }), data);
    });

    it("gives an empty stream for start === end and for start === size", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}r`;
      await d.put(key, streamOf(data));
      assert.deepEqual(await readBytes(d, key, { start: 7, end: 7 }), Buffer.alloc(0));
      assert.deepEqual(await readBytes(d, key, { start: 1000 }), Buffer.alloc(0));
      assert.deepEqual(await readBytes(d, key, { start: 1000, end: 2000 }), Buffer.alloc(0));
    });

    it("rejects a start past the end with BlobRangeError carrying the size", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}r`;
      await d.put(key, streamOf(data));
      for (const range of [{ start: 1001 }, { start: 5000, end: 6000 }]) {
        await assert.rejects(d.read(key, range), (err: unknown) => {
          assert.ok(err instanceof BlobRangeError);
          assert.ok(err instanceof RangeError);
          assert.equal(err.size, 1000);
          assert.equal(err.key, key);
          return true;
        });
      }
    });

    it("rejects malformed ranges with RangeError", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}r`;
      await d.put(key, streamOf(data));
      for (const range of [
        { start: -1 },
        { start: 5, end: 4 },
        { start: 1.5 },
        { start: 0, end: Number.NaN },
      ]) {
        await assert.rejects(d.read(key, range), RangeError, JSON.stringify(range));
      }
    });

    it("handles ranges on an empty object", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}empty`;
      await d.put(key, streamOf());
      assert.deepEqual(await readBytes(d, key, { start: 0 }), Buffer.alloc(0));
      assert.deepEqual(await readBytes(d, key, { start: 0, end: 10 }), Buffer.alloc(0));
      await assert.rejects(d.read(key, { start: 1 }), BlobRangeError);
    });

    it("reads every range of an appendable object across chunk boundaries", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}appended`;
      const chunks = [bytes(3, 1), Buffer.alloc(0), bytes(4, 2), bytes(1, 3)];
      for (const chunk of chunks) await d.append(key, streamOf(chunk));
      const whole = Buffer.concat(chunks);
      assert.deepEqual(await readBytes(d, key), whole);
      for (let start = 0; start <= whole.length; start++) {
        for (const end of [start, start + 1, start + 3, whole.length, whole.length + 2]) {
          assert.deepEqual(
            await readBytes(d, key, { start, end }),
            whole.subarray(start, Math.min(end, whole.length)),
            `[${start}, ${end})`,
          );
        }
        assert.deepEqual(await readBytes(d, key, { start }), whole.subarray(start), `[${start}, )`);
      }
      await assert.rejects(d.read(key, { start: whole.length + 1 }), BlobRangeError);
    });
  });
}
