import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BlobNotFoundError } from "../../../src/storage/blobs/blob-driver.js";
import type { BlobFixture } from "./blob-test-backends.js";
import {
  bytes,
  failingStream,
  listAll,
  readAll,
  readBytes,
  SOURCE_FAILURE,
  streamOf,
} from "./blob-test-data.js";

/** append (resumable uploads), commit, and how they meet put and delete. */
export function appendCommitCases(fx: BlobFixture): void {
  describe("append and commit", () => {
    it("appends chunks, returning running totals; stat and read see the concatenation", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}uploads/u1/data`;
      const chunks = [bytes(10, 1), bytes(70_000, 2), bytes(1, 3)];
      let size = 0;
      for (const chunk of chunks) {
        size += chunk.length;
        assert.equal(await d.append(key, streamOf(chunk)), size);
        assert.equal((await d.stat(key))?.size, size);
      }
      assert.deepEqual(await readBytes(d, key), Buffer.concat(chunks));
      const st = await d.stat(key);
      assert.ok(st !== undefined && Number.isInteger(st.modifiedTime));
    });

    it("an empty first chunk creates an empty object", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}uploads/u2/data`;
      assert.equal(await d.append(key, streamOf()), 0);
      assert.equal((await d.stat(key))?.size, 0);
      assert.deepEqual(await readBytes(d, key), Buffer.alloc(0));
      assert.equal(await d.append(key, streamOf("ab")), 2);
      assert.equal(await d.append(key, streamOf()), 2);
      assert.deepEqual(await readBytes(d, key), Buffer.from("ab"));
    });

    it("a failing chunk keeps the previous size and bytes; later appends continue from there", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}uploads/u3/data`;
      await d.append(key, streamOf("first-"));
      const raw = await fx.rawKeys();
      await assert.rejects(d.append(key, failingStream(bytes(40_000), bytes(40_000))), {
        message: SOURCE_FAILURE,
      });
      assert.equal((await d.stat(key))?.size, 6);
      assert.deepEqual(await readBytes(d, key), Buffer.from("first-"));
      assert.deepEqual(await fx.rawKeys(), raw, "nothing left of the failed chunk");
      assert.equal(await d.append(key, streamOf("second")), 12);
      assert.deepEqual(await readBytes(d, key), Buffer.from("first-second"));
    });

    it("a failing first chunk leaves no object", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      const raw = await fx.rawKeys();
      await assert.rejects(d.append(`${ns}uploads/u4/data`, failingStream(bytes(1000))), {
        message: SOURCE_FAILURE,
      });
      assert.equal(await d.stat(`${ns}uploads/u4/data`), undefined);
      assert.deepEqual(await listAll(d, ns), []);
      assert.deepEqual(await fx.rawKeys(), raw);
    });

    it("commit makes the concatenation readable at the target and removes the source", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      const from = `${ns}uploads/u5/data`;
      const to = `${ns}blobs/sha256/cd/cdef/data`;
      const chunks = [bytes(1000, 1), bytes(2000, 2), bytes(3, 3)];
      for (const chunk of chunks) await d.append(from, streamOf(chunk));
      await d.commit(from, to);
      assert.deepEqual(await readBytes(d, to), Buffer.concat(chunks));
      assert.equal((await d.stat(to))?.size, 3003);
      assert.equal(await d.stat(from), undefined);
      await assert.rejects(d.read(from), BlobNotFoundError);
      assert.deepEqual(
        (await listAll(d, ns)).map((e) => [e.key, e.size]),
        [[to, 3003]],
      );
      assert.deepEqual(
        (await fx.rawKeys()).filter((k) => k.startsWith(ns)),
        [to],
        "no chunks left behind",
      );
    });

    it("commit overwrites an existing target, plain or appendable", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      await d.put(`${ns}to-plain`, streamOf(bytes(500, 9)));
      await d.append(`${ns}to-appendable`, streamOf("old"));
      await d.append(`${ns}to-appendable`, streamOf("old"));
      for (const to of [`${ns}to-plain`, `${ns}to-appendable`]) {
        const from = `${ns}from`;
        await d.append(from, streamOf("new-"));
        await d.append(from, streamOf("bytes"));
        await d.commit(from, to);
        assert.deepEqual(await readBytes(d, to), Buffer.from("new-bytes"), to);
        assert.equal((await d.stat(to))?.size, 9);
      }
      assert.deepEqual((await listAll(d, ns)).map((e) => e.key).sort(), [
        `${ns}to-appendable`,
        `${ns}to-plain`,
      ]);
      assert.deepEqual((await fx.rawKeys()).filter((k) => k.startsWith(ns)).sort(), [
        `${ns}to-appendable`,
        `${ns}to-plain`,
      ]);
    });

    it("commit of a plain object moves it", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      await d.put(`${ns}a`, streamOf("plain"));
      await d.commit(`${ns}a`, `${ns}dir/b`);
      assert.deepEqual(await readBytes(d, `${ns}dir/b`), Buffer.from("plain"));
      assert.equal(await d.stat(`${ns}a`), undefined);
    });

    it("commit of an empty appendable object gives an empty object", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      await d.append(`${ns}u`, streamOf());
      await d.commit(`${ns}u`, `${ns}v`);
      assert.equal((await d.stat(`${ns}v`))?.size, 0);
      assert.equal(await d.stat(`${ns}u`), undefined);
    });

    it("commit of a missing source rejects with BlobNotFoundError and changes nothing", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      await d.put(`${ns}to`, streamOf("kept"));
      await assert.rejects(d.commit(`${ns}nope`, `${ns}to`), (err: unknown) => {
        assert.ok(err instanceof BlobNotFoundError);
        assert.equal(err.key, `${ns}nope`);
        return true;
      });
      assert.deepEqual(await readBytes(d, `${ns}to`), Buffer.from("kept"));
    });

    it("commit to the same key is a TypeError", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}same`;
      await d.append(key, streamOf("x"));
      await assert.rejects(d.commit(key, key), TypeError);
      assert.deepEqual(await readBytes(d, key), Buffer.from("x"));
    });

    it("append to a put object extends it", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}extend`;
      await d.put(key, streamOf("base-"));
      assert.equal(await d.append(key, streamOf("more")), 9);
      assert.equal(await d.append(key, streamOf("!")), 10);
      assert.deepEqual(await readBytes(d, key), Buffer.from("base-more!"));
      assert.deepEqual(await readBytes(d, key, { start: 3, end: 7 }), Buffer.from("e-mo"));
    });

    it("put to an appendable object replaces it entirely", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      const key = `${ns}replace`;
      await d.append(key, streamOf("chunk-1"));
      await d.append(key, streamOf("chunk-2"));
      await d.put(key, streamOf("new"));
      assert.deepEqual(await readBytes(d, key), Buffer.from("new"));
      assert.equal((await d.stat(key))?.size, 3);
      assert.deepEqual(
        (await listAll(d, ns)).map((e) => [e.key, e.size]),
        [[key, 3]],
      );
      assert.deepEqual(
        (await fx.rawKeys()).filter((k) => k.startsWith(ns)),
        [key],
        "the old chunks are gone",
      );
      assert.equal(await d.append(key, streamOf("+")), 4);
      assert.deepEqual(await readBytes(d, key), Buffer.from("new+"));
    });

    it("a read stream is a snapshot: a chunk appended after read() resolved is not in it", async () => {
      const d = fx.driver;
      const key = `${fx.ns()}snapshot`;
      await d.append(key, streamOf("before"));
      await d.append(key, streamOf("-and"));
      const whole = await d.read(key);
      const ranged = await d.read(key, { start: 2 });
      await d.append(key, streamOf("-after"));
      assert.equal((await readAll(whole)).toString(), "before-and");
      assert.equal((await readAll(ranged)).toString(), "fore-and");
    });

    it("delete removes an appendable object (all its chunks) and is idempotent", async () => {
      const d = fx.driver;
      const ns = fx.ns();
      const key = `${ns}uploads/u6/data`;
      await d.append(key, streamOf("a"));
      await d.append(key, streamOf("b"));
      await d.delete(key);
      assert.equal(await d.stat(key), undefined);
      await assert.rejects(d.read(key), BlobNotFoundError);
      await d.delete(key);
      assert.deepEqual(await listAll(d, ns), []);
      assert.deepEqual(
        (await fx.rawKeys()).filter((k) => k.startsWith(ns)),
        [],
      );
      assert.equal(await d.append(key, streamOf("c")), 1, "starts afresh after delete");
    });
  });
}
