import assert from "node:assert/strict";
import { PassThrough, Readable, Writable } from "node:stream";
import { describe, it } from "node:test";
import { teeBlob } from "../../../../src/registry/pull-through/blob-tee.js";
import { createSingleFlight } from "../../../../src/registry/pull-through/single-flight.js";
import { createTagChecks } from "../../../../src/registry/pull-through/tag-checks.js";
import { createUpstreamWarnings } from "../../../../src/registry/pull-through/upstream-warnings.js";
import type { UpstreamConfig } from "../../../../src/registry/upstreams/upstream-directory.js";

function clockAt(start: number) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const upstream: UpstreamConfig = {
  uid: "u",
  orgUid: "o",
  orgName: "acme",
  name: "hub",
  url: "https://r.example",
  username: "",
  password: "",
  tagTtlMs: 1000,
  updateTime: 1,
};

async function drain(stream: PassThrough): Promise<Buffer | Error> {
  const chunks: Buffer[] = [];
  try {
    for await (const c of stream) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  } catch (err) {
    return err as Error;
  }
}

describe("pull-through pieces", () => {
  it("single flight: concurrent calls share one run; a settled key runs again, failures included", async () => {
    const flights = createSingleFlight<number>();
    let runs = 0;
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const a = flights.run("k", async () => {
      runs++;
      await gate;
      return 7;
    });
    const b = flights.run("k", async () => 99);
    assert.equal(a.leader, true);
    assert.equal(b.leader, false);
    release();
    assert.deepEqual(await Promise.all([a.promise, b.promise]), [7, 7]);
    assert.equal(runs, 1);
    assert.equal(flights.size, 0);
    await assert.rejects(flights.run("k", async () => Promise.reject(new Error("boom"))).promise, /boom/);
    assert.equal(await flights.run("k", async () => 8).promise, 8);
  });

  it("tag checks: fresh for less than the TTL, and bounded", () => {
    const clock = clockAt(0);
    const checks = createTagChecks(clock, 4);
    assert.equal(checks.fresh("a", 100), false);
    checks.checked("a");
    clock.advance(99);
    assert.equal(checks.fresh("a", 100), true);
    clock.advance(1);
    assert.equal(checks.fresh("a", 100), false);
    for (const k of ["b", "c", "d", "e"]) checks.checked(k);
    assert.equal(checks.fresh("a", 1000), false, "the oldest were forgotten past the bound");
    assert.equal(checks.fresh("e", 1000), true);
  });

  it("warnings: one per upstream per tagTtl", () => {
    const clock = clockAt(0);
    const lines: object[] = [];
    const warnings = createUpstreamWarnings(clock, (l) => lines.push(l));
    assert.equal(warnings.warn(upstream, "down"), true);
    assert.equal(warnings.warn(upstream, "down"), false);
    assert.equal(warnings.warn({ ...upstream, uid: "other" }, "down"), true);
    clock.advance(1000);
    assert.equal(warnings.warn(upstream, "down"), true);
    assert.equal(lines.length, 3);
  });

  it("tee: both sides get every byte; the client's answer opens with the first byte due", async () => {
    const store = new PassThrough();
    const received: Buffer[] = [];
    let opened = 0;
    const client = new Writable({
      write(c, _e, cb) {
        received.push(c as Buffer);
        cb();
      },
    });
    const stored = drain(store);
    await teeBlob(Readable.from([Buffer.from("ab"), Buffer.from("cd")]), store, () => {
      opened++;
      return client;
    });
    assert.equal((await stored).toString(), "abcd");
    assert.equal(Buffer.concat(received).toString(), "abcd");
    assert.equal(opened, 1);
  });

  it("tee: a source failing at its end destroys the store side and never hands the client the last chunk", async () => {
    const store = new PassThrough();
    const received: Buffer[] = [];
    let opened = false;
    const client = new Writable({
      write(c, _e, cb) {
        received.push(c as Buffer);
        cb();
      },
    });
    const source = new Readable({ read() {} });
    const stored = drain(store);
    const done = teeBlob(source, store, () => {
      opened = true;
      return client;
    });
    // Apart in time, so the tee sees two chunks.
    source.push(Buffer.from("first"));
    setTimeout(() => {
      source.push(Buffer.from("last"));
      setTimeout(() => source.destroy(new Error("digest mismatch")), 5);
    }, 5);
    await done;
    assert.match(String(await stored), /digest mismatch/);
    assert.equal(Buffer.concat(received).toString(), "first");
    assert.equal(opened && client.destroyed, true);
  });

  it("tee: a failure before any byte was due leaves the client's answer unopened", async () => {
    const store = new PassThrough();
    const source = new Readable({ read() {} });
    let opened = false;
    const stored = drain(store);
    const done = teeBlob(source, store, () => {
      opened = true;
      return new PassThrough();
    });
    source.push(Buffer.from("only chunk"));
    setImmediate(() => source.destroy(new Error("truncated")));
    await done;
    assert.ok((await stored) instanceof Error);
    assert.equal(opened, false);
  });
});
