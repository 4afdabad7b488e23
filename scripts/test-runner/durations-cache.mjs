// Remembers how long each test file took, so the next run starts the longest files first: with
// files run side by side, a long file started last would leave the run waiting on it alone.
// Kept in node_modules/.cache (not committed; a fresh clone starts with end-to-end files first).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const cacheFile = (root) => join(root, "node_modules", ".cache", "wharf-tests", "durations.json");

/** The last known wall time (ms) of each test file or batch label, or an empty object. */
function remembered(root) {
  try {
    return JSON.parse(readFileSync(cacheFile(root), "utf8"));
  } catch {
    return {};
  }
}

/**
 * `entries` ordered longest first by their last known time (`nameOf` gives the name they were
 * recorded under). Entries never timed come first among end-to-end files, which are the slow kind,
 * and in their original order otherwise.
 */
export function longestFirst(root, entries, nameOf) {
  const known = remembered(root);
  const guess = (name) => known[name] ?? (/^test\/(e2e|robustness)\//.test(name) ? Infinity : 0);
  return entries
    .map((entry, i) => ({ entry, i, ms: guess(nameOf(entry)) }))
    .sort((a, b) => b.ms - a.ms || a.i - b.i)
    .map((e) => e.entry);
}

/** Records this run's times (`{file, ms}`, file being the name) over the remembered ones. */
export function rememberDurations(root, durations) {
  if (durations.length === 0) return;
  const known = remembered(root);
  for (const { file, ms } of durations) known[file] = ms;
  mkdirSync(join(cacheFile(root), ".."), { recursive: true });
  writeFileSync(cacheFile(root), `${JSON.stringify(known, null, 2)}\n`);
}
