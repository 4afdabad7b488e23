import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import {
  createImportProgress,
  PLAIN_LINE_INTERVAL_MS,
  StrictImportError,
  TTY_REDRAW_INTERVAL_MS,
} from "../../../src/cli/import-progress.js";

/** A real Writable that keeps what was written; `tty` makes it look like a terminal. */
function captureStream(tty: boolean): Writable & { isTTY?: boolean; columns?: number; text(): string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      chunks.push(String(chunk));
      done();
    },
  }) as Writable & { isTTY?: boolean; columns?: number; text(): string };
  if (tty) {
    stream.isTTY = true;
    stream.columns = 120;
  }
  stream.text = () => chunks.join("");
  return stream;
}

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, tick: (ms: number) => (t += ms) };
}

const CLEAR = "\r\x1b[2K";
const SUMMARY = { created: 3, updated: 1, unchanged: 5, rejected: 2 };

describe("import progress on a TTY", () => {
  it("redraws one line in place with the bar, the records, the rate and the ETA", () => {
    const stream = captureStream(true);
    const c = clock();
    const progress = createImportProgress({ stream, label: "wharf import libraries", now: c.now });
    progress.startFile("a.jsonl", 100);
    c.tick(1000);
    progress.advance(25);
    const text = stream.text();
    const draws = text.split("\r\x1b[2K").filter(Boolean);
    assert.equal(draws.length, 2, "one draw at start, one after the advance");
    assert.match(draws[0] as string, /^wharf import libraries: a\.jsonl \[-+\] 0\/100 records, 0\/s$/);
    assert.match(
      draws[1] as string,
      /^wharf import libraries: a\.jsonl \[#+-+\] 25\/100 records, 25\/s, ETA 3s$/,
    );
    assert.equal(text.includes("\n"), false, "the bar is never a new line");
  });

  it("redraws at most every 100 ms, but always at the last record", () => {
    const stream = captureStream(true);
    const c = clock();
    const progress = createImportProgress({ stream, label: "imp", now: c.now });
    progress.startFile("a.jsonl", 50);
    for (let i = 0; i < 49; i++) {
      c.tick(5);
      progress.advance();
    }
    // 49 advances over 245 ms: draws at 100 and 200 ms only (plus the start).
    assert.equal(stream.text().split("\r\x1b[2K").filter(Boolean).length, 3);
    c.tick(1);
    progress.advance();
    const last = stream.text().split("\r\x1b[2K").filter(Boolean).at(-1) as string;
    assert.match(last, /50\/50 records/);
    assert.ok(TTY_REDRAW_INTERVAL_MS <= 100);
  });

  it("without a total shows the count and rate, no bar and no ETA", () => {
    const stream = captureStream(true);
    const c = clock();
    const progress = createImportProgress({ stream, label: "imp", now: c.now });
    progress.startFile("big.json");
    c.tick(2000);
    progress.advance(10);
    const last = stream.text().split("\r\x1b[2K").filter(Boolean).at(-1) as string;
    assert.equal(last, "imp: big.json 10 records, 5/s");
  });

  it("a rejection clears the bar, prints its own line and the bar comes back at the next advance", () => {
    const stream = captureStream(true);
    const c = clock();
    const progress = createImportProgress({ stream, label: "imp", now: c.now });
    progress.startFile("a.jsonl", 10);
    progress.reject({
      file: "a.jsonl",
      location: "line 3",
      field: "ecosystem",
      message: 'unknown ecosystem "RUST"',
    });
    const afterReject = stream.text();
    assert.ok(afterReject.endsWith('\r\x1b[2Kimp: a.jsonl line 3: ecosystem: unknown ecosystem "RUST"\n'));
    progress.advance(); // same instant: redrawn anyway
    assert.ok(stream.text().slice(afterReject.length).startsWith(`${CLEAR}imp: a.jsonl [`));
    assert.match(stream.text(), /1\/10 records/);
  });

  it("finish clears the bar and prints the summary line", () => {
    const stream = captureStream(true);
    const c = clock();
    const progress = createImportProgress({ stream, label: "imp", now: c.now });
    progress.startFile("a.jsonl", 10);
    progress.finish(SUMMARY);
    assert.ok(stream.text().endsWith("\r\x1b[2Kimp: created 3, updated 1, unchanged 5, rejected 2\n"));
  });
});

describe("import progress on a plain stream", () => {
  it("writes no control characters: a line per file, progress every few seconds, the summary", () => {
    const stream = captureStream(false);
    const c = clock();
    const progress = createImportProgress({ stream, label: "imp", now: c.now });
    progress.startFile("a.jsonl", 1000);
    for (let i = 0; i < 100; i++) {
      c.tick(100);
      progress.advance(10);
    }
    progress.reject({ file: "a.jsonl", location: "line 7", field: "", message: "not JSON" });
    progress.finish(SUMMARY);
    const lines = stream.text().split("\n");
    assert.equal(stream.text().includes("\x1b"), false);
    assert.equal(stream.text().includes("\r"), false);
    assert.deepEqual(lines, [
      "imp: a.jsonl (1000 records)",
      "imp: a.jsonl: 500/1000 records, 100/s, ETA 5s",
      "imp: a.jsonl: 1000/1000 records, 100/s",
      "imp: a.jsonl line 7: not JSON",
      "imp: created 3, updated 1, unchanged 5, rejected 2",
      "",
    ]);
    assert.equal(PLAIN_LINE_INTERVAL_MS, 5000);
  });

  it("names each file as it starts", () => {
    const stream = captureStream(false);
    const progress = createImportProgress({ stream, label: "imp", now: () => 0 });
    progress.startFile("a.yaml");
    progress.advance(3);
    progress.startFile("b.yaml", 2);
    assert.equal(stream.text(), "imp: a.yaml\nimp: b.yaml (2 records)\n");
  });
});

describe("StrictImportError", () => {
  it("carries the record and names the file in its message", () => {
    const record = {
      file: "x.jsonl",
      location: "line 2",
      field: "publishTime",
      message: "not an RFC 3339 time",
    };
    const err = new StrictImportError(record);
    assert.equal(err.record, record);
    assert.match(err.message, /x\.jsonl line 2: publishTime: not an RFC 3339 time/);
    assert.ok(err instanceof Error);
  });
});
