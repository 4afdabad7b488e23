#!/usr/bin/env node
// Compiles src/ into dist/ and builds the console (console/ into dist/console) with `npm run build`
// unless dist/ is newer than every source file (tests aside), folder and build setting, so tests
// that spawn bin/wharf.js or open the console run the code being tested.
// The check costs a few milliseconds; tsc's own incremental check takes seconds when nothing changed.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = new URL("..", import.meta.url).pathname;
const stamp = join(root, "dist", ".tsbuildinfo");
const settings = ["tsconfig.json", "tsconfig.build.json", "package.json"];

/** The newest modification time (ms) of `path` and, for a folder, everything in it. */
function newest(path) {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs; // a folder's time changes when an entry is added, removed or renamed
  for (const name of readdirSync(path)) {
    if (!/\.test\.tsx?$/.test(name)) latest = Math.max(latest, newest(join(path, name)));
  }
  return latest;
}

/** Builds dist/ when it is missing or older than src/, console/ or the build settings; throws when the build fails. */
export function buildIfStale() {
  let built = 0;
  try {
    built = statSync(stamp).mtimeMs;
  } catch {}
  const sources = Math.max(
    newest(join(root, "src")),
    newest(join(root, "console")),
    ...settings.map((f) => newest(join(root, f))),
  );
  if (built > sources) return;
  const started = Date.now();
  const tsc = spawnSync("npm", ["run", "--silent", "build"], { cwd: root, stdio: "inherit" });
  if (tsc.status !== 0) throw new Error("npm run build failed");
  // tsc leaves its build info untouched when no output changed: mark dist/ as built from the sources
  // as they were when it started (a file saved during the build is newer, so the next run builds).
  const startedAt = new Date(started);
  utimesSync(stamp, startedAt, startedAt);
  console.error(`build-if-stale: compiled src/ into dist/ in ${Date.now() - started} ms`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) buildIfStale();
