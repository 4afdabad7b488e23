import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { describe, it } from "node:test";
import { createGcProgress } from "../../../../src/cli/server/gc-progress.js";
import {
  GARBAGE_PHASES,
  type GarbageProgress,
} from "../../../../src/registry/data-plane/garbage-collector.js";

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

const at = (phase: GarbageProgress["phase"], examined: number, removed: number, bytesFreed: number) => ({
  phase,
  phaseIndex: GARBAGE_PHASES.indexOf(phase),
  examined,
  removed,
  bytesFreed,
});

describe("wharf gc progress", () => {
  it("plain: a line per phase as it ends, one every few seconds in a long phase, then the totals", () => {
    const stream = captureStream(false);
    let now = 0;
    const progress = createGcProgress(stream, () => now);
    progress.update(at("manifests", 0, 0, 0));
    for (let i = 1; i <= 60; i++) {
      now += 100;
      progress.update(at("manifests", i, Math.floor(i / 2), 0));
    }
    progress.update(at("blobs", 0, 0, 0));
    progress.update(at("blobs", 1, 1, 2048));
    progress.finish({ removed: 31, bytesFreed: 2048 });
    assert.deepEqual(stream.text().split("\n"), [
      "wharf gc: manifests (3/6): examined 50, removed 25, freed 0 B so far",
      "wharf gc: manifests (3/6): examined 60, removed 30, freed 0 B",
      "wharf gc: blobs (5/6): examined 1, removed 1, freed 2.0 KiB",
      "wharf gc: done: removed 31 objects, freed 2.0 KiB",
      "",
    ]);
  });

  it("on a TTY: a bar over the phases redrawn in place, cleared before the totals", (t) => {
    // The bar's redraw timer (cli-progress's setTimeout) runs as the test moves the time on.
    t.mock.timers.enable({ apis: ["setTimeout"] });
    const stream = captureStream(true);
    const progress = createGcProgress(stream);
    progress.update(at("blobs", 7, 3, 3 * 1024 * 1024));
    t.mock.timers.tick(250);
    assert.match(
      stream.text(),
      /wharf gc: blobs \(5\/6\) \[#+-+\] examined 7, removed 3, freed 3\.0 MiB/,
      "the bar shows the phase, its counts and the bytes freed",
    );
    progress.finish({ removed: 3, bytesFreed: 3 * 1024 * 1024 });
    const after = stream.text();
    assert.ok(after.endsWith("wharf gc: done: removed 3 objects, freed 3.0 MiB\n"));
    t.mock.timers.tick(250);
    assert.equal(stream.text(), after, "nothing is drawn after the end");
  });
});
