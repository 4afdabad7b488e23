import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, it, mock } from "node:test";
import {
  createImportProgress,
  PLAIN_LINE_INTERVAL_MS,
  StrictImportError,
  TTY_REDRAW_INTERVAL_MS,
} from "../../../../src/cli/server/import-progress.js";

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

const SUMMARY = { created: 3, updated: 1, unchanged: 5, rejected: 2 };
const ESC = String.fromCharCode(27);
const LINE_RESET = new RegExp(`\\r|${ESC}\\[[02]?K|${ESC}\\[\\d*G`);
const OTHER_ESCAPES = new RegExp(`${ESC}\\[[0-9;?]*[A-Za-z]`, "g");
/** The screen lines a terminal would show: escape sequences dropped, `\r` and clears applied. */
function screen(text: string): string[] {
  const lines: string[] = [];
  for (const raw of text.split("\n")) {
    // The text after the last carriage return or line clear is what stays on that line.
    const parts = raw.split(LINE_RESET);
    lines.push((parts.at(-1) ?? "").replace(OTHER_ESCAPES, ""));
  }
  return lines;
}

describe("import progress on a TTY (cli-progress)", () => {
  // The bar's redraw timer (cli-progress's setTimeout) runs as each test moves the time on.
  beforeEach(() => mock.timers.enable({ apis: ["setTimeout"] }));
  afterEach(() => mock.timers.reset());
  const elapse = (ms: number) => mock.timers.tick(ms);

  it("draws one line in place: file, bar, records, rate; rejections above it; the summary replaces it", () => {
    const stream = captureStream(true);
    const progress = createImportProgress({ stream, label: "wharf import libraries" });
    progress.startFile("a.jsonl", 100);
    elapse(TTY_REDRAW_INTERVAL_MS * 1.5);
    assert.match(stream.text(), /wharf import libraries: a\.jsonl \[-+\] 0\/100 records, 0\/s/);
    progress.advance(25);
    progress.reject({
      file: "a.jsonl",
      location: "line 3",
      field: "ecosystem",
      message: 'unknown ecosystem "RUST"',
    });
    elapse(TTY_REDRAW_INTERVAL_MS * 2.5);
    assert.match(
      stream.text(),
      /a\.jsonl \[#+-+\] 25\/100 records, \d+\/s/,
      "redrawn from cli-progress's timer",
    );
    progress.advance(75);
    progress.finish(SUMMARY);
    const text = stream.text();
    const shown = screen(text).filter((l) => l !== "");
    assert.deepEqual(shown, [
      'wharf import libraries: a.jsonl line 3: ecosystem: unknown ecosystem "RUST"',
      "wharf import libraries: created 3, updated 1, unchanged 5, rejected 2",
    ]);
    assert.ok(text.includes("\r") || text.includes("\x1b["), "the bar is redrawn with control characters");
  });

  it("without a total shows the count and rate, no bar", () => {
    const stream = captureStream(true);
    const progress = createImportProgress({ stream, label: "imp" });
    progress.startFile("big.json");
    progress.advance(10);
    elapse(TTY_REDRAW_INTERVAL_MS * 2.5);
    progress.finish(SUMMARY);
    assert.match(stream.text(), /imp: big\.json 10 records, \d+\/s/);
    assert.doesNotMatch(stream.text(), /\[[#-]+\]/);
  });

  it("finish stops the redraw timer: nothing is written after it", () => {
    const stream = captureStream(true);
    const progress = createImportProgress({ stream, label: "imp" });
    progress.startFile("a.jsonl", 10);
    progress.finish(SUMMARY);
    const after = stream.text();
    elapse(TTY_REDRAW_INTERVAL_MS * 3);
    assert.equal(stream.text(), after);
    assert.ok(after.endsWith("imp: created 3, updated 1, unchanged 5, rejected 2\n"));
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
