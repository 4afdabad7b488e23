import assert from "node:assert/strict";
import { PassThrough, Readable } from "node:stream";
import { describe, it } from "node:test";
import type { BlobDriver, BlobListEntry } from "../../../../src/storage/blobs/blob-driver.js";
import { validatingBlobDriver } from "../../../../src/storage/blobs/validating-blob-driver.js";

// The wrapper alone, around a driver that records its calls: a bad argument never reaches the
// driver (so no I/O happens), a good one reaches it unchanged, once. The conformance suite checks
// the same contract end to end on every real driver as its factory returns it.

/** A driver that records every call and answers with fixed values. */
function recordingDriver(): { driver: BlobDriver; calls: string[] } {
  const calls: string[] = [];
  const driver: BlobDriver = {
    kind: "memory",
    async stat(key) {
      calls.push(`stat ${key}`);
      return { size: 1, modifiedTime: 2 };
    },
    async read(key, range) {
      calls.push(`read ${key} ${JSON.stringify(range)}`);
      return Readable.from([]);
    },
    async pipeTo(key, _sink, range) {
      calls.push(`pipeTo ${key} ${JSON.stringify(range)}`);
    },
    async put(key) {
      calls.push(`put ${key}`);
      return 3;
    },
    async append(key) {
      calls.push(`append ${key}`);
      return 4;
    },
    async commit(from, to) {
      calls.push(`commit ${from} ${to}`);
    },
    async delete(key) {
      calls.push(`delete ${key}`);
    },
    list(prefix) {
      calls.push(`list ${prefix}`);
      return (async function* (): AsyncGenerator<BlobListEntry> {})();
    },
    async close() {
      calls.push("close");
    },
  };
  return { driver, calls };
}

describe("validatingBlobDriver", () => {
  it("passes valid calls through unchanged, one call each, with the driver's answers", async () => {
    const { driver, calls } = recordingDriver();
    const d = validatingBlobDriver(driver);
    assert.equal(d.kind, "memory");
    assert.deepEqual(await d.stat("a/b"), { size: 1, modifiedTime: 2 });
    await d.read("a/b", { start: 1, end: 2 });
    await d.pipeTo("a/b", new PassThrough(), { start: 0 });
    assert.equal(await d.put("a/b", Readable.from([])), 3);
    assert.equal(await d.append("a/c", Readable.from([])), 4);
    await d.commit("a/c", "a/b");
    await d.delete("a/b");
    d.list("a/");
    d.list("");
    await d.close();
    assert.deepEqual(calls, [
      "stat a/b",
      'read a/b {"start":1,"end":2}',
      'pipeTo a/b {"start":0}',
      "put a/b",
      "append a/c",
      "commit a/c a/b",
      "delete a/b",
      "list a/",
      "list ",
      "close",
    ]);
  });

  it("rejects invalid keys with TypeError without calling the driver", async () => {
    const { driver, calls } = recordingDriver();
    const d = validatingBlobDriver(driver);
    for (const key of ["", "/a", "a//b", "..", "_tmp/x", "x.parts/1", "caf\u00e9"]) {
      await assert.rejects(d.stat(key), TypeError);
      await assert.rejects(d.read(key), TypeError);
      await assert.rejects(d.pipeTo(key, new PassThrough()), TypeError);
      await assert.rejects(d.put(key, Readable.from([])), TypeError);
      await assert.rejects(d.append(key, Readable.from([])), TypeError);
      await assert.rejects(d.commit(key, "a/b"), TypeError);
      await assert.rejects(d.commit("a/b", key), TypeError);
      await assert.rejects(d.delete(key), TypeError);
    }
    assert.deepEqual(calls, []);
  });

  it("rejects, never throws: a bad argument surfaces through the promise", async () => {
    const d = validatingBlobDriver(recordingDriver().driver);
    const pending = [d.stat("/a"), d.read("a", { start: -1 }), d.commit("a", "a"), d.delete("")];
    for (const p of pending) assert.ok(p instanceof Promise);
    await Promise.all(pending.map((p) => assert.rejects(p)));
  });

  it("rejects malformed ranges with a plain RangeError and leaves a pipeTo sink untouched", async () => {
    const { driver, calls } = recordingDriver();
    const d = validatingBlobDriver(driver);
    for (const range of [
      { start: -1 },
      { start: 1.5 },
      { start: 2, end: 1 },
      { start: 0, end: Number.NaN },
    ]) {
      await assert.rejects(d.read("a/b", range), (err: Error) => err.constructor === RangeError);
      const sink = new PassThrough();
      await assert.rejects(d.pipeTo("a/b", sink, range), (err: Error) => err.constructor === RangeError);
      assert.equal(sink.destroyed, false);
      assert.equal(sink.writableEnded, false);
    }
    assert.deepEqual(calls, []);
  });

  it("destroys the source of a put or append it refuses", async () => {
    const d = validatingBlobDriver(recordingDriver().driver);
    for (const write of [d.put.bind(d), d.append.bind(d)]) {
      const source = Readable.from(["x"]);
      await assert.rejects(write("/bad", source), TypeError);
      assert.equal(source.destroyed, true);
    }
  });

  it("refuses to commit a key onto itself with the driver's message", async () => {
    const { driver, calls } = recordingDriver();
    await assert.rejects(validatingBlobDriver(driver).commit("a/b", "a/b"), {
      name: "TypeError",
      message: "commit needs two different keys, got a/b twice",
    });
    assert.deepEqual(calls, []);
  });

  it("throws synchronously for an invalid list prefix", () => {
    const { driver, calls } = recordingDriver();
    const d = validatingBlobDriver(driver);
    for (const prefix of ["/", "a//", "../", "_tmp/", "x.parts/"])
      assert.throws(() => d.list(prefix), TypeError);
    assert.deepEqual(calls, []);
  });
});
