import { GARBAGE_PHASES, type GarbageProgress } from "../../registry/data-plane/garbage-collector.js";
import { formatBytes } from "../../sdk/byte-size.js";
import { isTerminal, lineTicker, type ProgressStream, terminalBar } from "../client/progress.js";

/** What `wharf gc` shows while it runs: feed it `update`, then `finish` (or `close` on failure). */
export interface GcProgress {
  /** The collector's progress (collectGarbage's `onProgress`). */
  update(progress: GarbageProgress): void;
  /** Ends the display with the run's totals: objects removed, bytes freed. */
  finish(totals: { removed: number; bytesFreed: number }): void;
  /** Clears the bar without totals (before a failure's message). */
  close(): void;
}

const phaseName = (p: GarbageProgress) => `${p.phase} (${p.phaseIndex + 1}/${GARBAGE_PHASES.length})`;

/**
 * The progress of `wharf gc` on `stream` (stderr). On a TTY: a cli-progress bar over the phases,
 * with the current phase's counts and the bytes freed. Elsewhere: one line when each phase ends
 * (`wharf gc: blobs (5/6): examined 12, removed 3, freed 1.2 MiB`), one at most every
 * PLAIN_LINE_INTERVAL_MS during a long phase, and the totals at the end. `now` is for tests.
 */
export function createGcProgress(
  stream: ProgressStream,
  now: () => number = Date.now,
  opts: { dryRun?: boolean } = {},
): GcProgress {
  // A dry run removes nothing: it says what a run would remove.
  const LABEL = opts.dryRun ? "wharf gc --dry-run" : "wharf gc";
  const [removedWord, freedWord] = opts.dryRun ? ["would remove", "would free"] : ["removed", "freed"];
  const counts = (p: GarbageProgress) =>
    `examined ${p.examined}, ${removedWord} ${p.removed}, ${freedWord} ${formatBytes(p.bytesFreed)}`;
  const bar = isTerminal(stream) ? terminalBar(stream, LABEL) : undefined;
  const ticker = lineTicker(undefined, now);
  let last: GarbageProgress | undefined;
  const line = (text: string) => stream.write(`${LABEL}: ${text}\n`);
  const endPhase = () => {
    if (last && !bar) line(`${phaseName(last)}: ${counts(last)}`);
  };
  return {
    update(progress) {
      if (last && progress.phase !== last.phase) {
        endPhase();
        ticker.reset();
      }
      last = progress;
      if (bar) {
        bar.show({
          head: phaseName(progress),
          tail: counts(progress),
          done: progress.phaseIndex,
          total: GARBAGE_PHASES.length,
        });
      } else if (ticker.due()) {
        line(`${phaseName(progress)}: ${counts(progress)} so far`);
      }
    },
    finish(totals) {
      endPhase();
      bar?.stop();
      line(`done: ${removedWord} ${totals.removed} objects, ${freedWord} ${formatBytes(totals.bytesFreed)}`);
    },
    close() {
      bar?.stop();
    },
  };
}
