import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BlobNotFoundError } from "../../../src/storage/blobs/blob-driver.js";
import type { BlobFixture } from "./blob-test-backends.js";
import { bytes, failingStream, listAll, readBytes, SOURCE_FAILURE, streamOf } from "./blob-test-data.js";

/** Clock slack for modification times (S3 has whole seconds; servers' clocks drift a little). */
const CLOCK_SLACK_MS = 60_000;

/** put / read / stat / delete of plain objects, and failing sources. */
export function basicCases(fx: BlobFixture): void {
  describe("put, read, stat, delete", () => {
    it("round-trips binary bytes written in several chunks, and stats them", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}blobs/sha256/ab/abcdef/data`;
      const parts = [bytes(256), bytes(1), bytes(70_000, 3), Buffer.from([0, 0xff, 0x0d, 0x0a, 0])];
      const expected = Buffer.concat(parts);
      const before = Date.now();
      assert.equal(await d.put(key, streamOf(...parts)), expected.length);
      assert.deepEqual(await readBytes(d, key), expected);
      const st = await d.stat(key);
      assert.ok(st !== undefined);
      assert.equal(st.size, expected.length);
      assert.ok(Number.isInteger(st.modifiedTime), "modifiedTime is integer ms");
      assert.ok(
        Math.abs(st.modifiedTime - before) < CLOCK_SLACK_MS,
        `modifiedTime ${st.modifiedTime} near now`,
      );
      assert.equal(d.kind, fx.kind);
    });

    it("stores and reads an empty object", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}empty`;
      assert.equal(await d.put(key, streamOf()), 0);
      assert.equal((await d.stat(key))?.size, 0);
      assert.deepEqual(await readBytes(d, key), Buffer.alloc(0));
      assert.deepEqual(
        (await listAll(d, key)).map((e) => [e.key, e.size]),
        [[key, 0]],
      );
    });

    it("stat of a missing key is undefined; read of it rejects with BlobNotFoundError", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}missing/data`;
      assert.equal(await d.stat(key), undefined);
      await assert.rejects(d.read(key), (err: unknown) => {
        assert.ok(err instanceof BlobNotFoundError);
        assert.equal(err.key, key);
        return true;
      });
      await assert.rejects(d.read(key, { start: 0, end: 1 }), BlobNotFoundError);
      await assert.rejects(d.read(key, { start: 5 }), BlobNotFoundError);
    });

    it("a directory-like prefix of existing keys is not an object", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      await d.put(`${ns}dir/child`, streamOf("x"));
      assert.equal(await d.stat(`${ns}dir`), undefined);
      await assert.rejects(d.read(`${ns}dir`), BlobNotFoundError);
      await d.delete(`${ns}dir`);
      assert.equal((await d.stat(`${ns}dir/child`))?.size, 1);
    });

    it("put overwrites an existing object with a shorter one completely", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}over`;
      await d.put(key, streamOf(bytes(5000, 1)));
      assert.equal(await d.put(key, streamOf("short")), 5);
      assert.deepEqual(await readBytes(d, key), Buffer.from("short"));
      assert.equal((await d.stat(key))?.size, 5);
    });

    it("a put whose source fails leaves nothing visible and nothing behind", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      await d.put(`${ns}keep`, streamOf("keep"));
      const listed = await listAll(d, ns);
      const raw = await fx.rawKeys();
      await assert.rejects(d.put(`${ns}new/data`, failingStream(bytes(100_000), bytes(100_000))), {
        message: SOURCE_FAILURE,
      });
      assert.equal(await d.stat(`${ns}new/data`), undefined);
      await assert.rejects(d.read(`${ns}new/data`), BlobNotFoundError);
      assert.deepEqual(await listAll(d, ns), listed);
      assert.deepEqual(await fx.rawKeys(), raw, "no temporary data left");
    });

    it("a put whose source fails keeps the previous object intact", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}previous`;
      await d.put(key, streamOf("previous content"));
      await assert.rejects(d.put(key, failingStream(bytes(50_000))), { message: SOURCE_FAILURE });
      assert.deepEqual(await readBytes(d, key), Buffer.from("previous content"));
      assert.equal((await d.stat(key))?.size, 16);
    });

    it("delete removes an object and is idempotent", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      await d.put(`${ns}a/b`, streamOf("b"));
      await d.put(`${ns}a/c`, streamOf("c"));
      await d.delete(`${ns}a/b`);
      assert.equal(await d.stat(`${ns}a/b`), undefined);
      await assert.rejects(d.read(`${ns}a/b`), BlobNotFoundError);
      await d.delete(`${ns}a/b`);
      await d.delete(`${ns}never/was`);
      assert.deepEqual(await readBytes(d, `${ns}a/c`), Buffer.from("c"));
      await d.delete(`${ns}a/c`);
      assert.deepEqual(await listAll(d, ns), []);
      assert.deepEqual(
        (await fx.rawKeys()).filter((k) => k.startsWith(ns)),
        [],
      );
    });

    it("a deleted key can be written again", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}x/y/z`;
      await d.put(key, streamOf("1"));
      await d.delete(key);
      await d.put(key, streamOf("22"));
      assert.deepEqual(await readBytes(d, key), Buffer.from("22"));
    });
  });
}
