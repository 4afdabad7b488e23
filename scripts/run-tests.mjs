#!/usr/bin/env node
// Runs the tests: every *.test.ts under src/ and test/ with node:test (or the files and folders
// named on the command line), then the console's component tests (console/**/*.test.tsx) with
// Vitest. Explicit paths run with the runner they belong to (console/… → Vitest).
//
//   node scripts/run-tests.mjs [--concurrency N] [--slowest N] [PATH…]
//
// - Files run in parallel, one process each, `--concurrency` at a time (default: the machine's
//   parallelism plus one, as most files spend their time waiting on servers and child processes;
//   `WHARF_TEST_CONCURRENCY` sets it too). Unit test files (test/unit/) are the exception: they
//   share processes, `--concurrency` batches of them, as starting a process that loads TypeScript
//   through tsx costs more than most unit files take to run (test-runner/batches.mjs).
// - The files that took longest last time start first (test-runner/durations-cache.mjs), so the
//   run does not end waiting on one long file started late.
// - One PostgreSQL server serves the whole run (test/support/shared-postgres.ts): each suite gets
//   its own database, copied from a migrated template.
// - The `--slowest` files (default 20) are listed at the end with their wall time, so the next slow
//   file shows the day it lands.
// Tests run src/ through tsx; those that spawn bin/wharf.js run dist/, so it is built first when
// stale. Worker threads (event dispatcher, WAL checkpointer, upload hasher) start from dist/ too,
// without tsx: through tsx each thread cost a second of CPU and a loader thread of its own. Exits non-zero when a test fails or when no test ran.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { register } from "tsx/esm/api";
import { buildIfStale } from "./build-if-stale.mjs";
import { unitBatches } from "./test-runner/batches.mjs";
import { longestFirst, rememberDurations } from "./test-runner/durations-cache.mjs";

const root = new URL("..", import.meta.url).pathname;
const tsxInWorkers = new URL("./tsx-in-workers.mjs", import.meta.url).pathname;
const durationsReporter = new URL("./test-runner/file-durations-reporter.mjs", import.meta.url).pathname;

const { values: options, positionals: paths } = parseArgs({
  allowPositionals: true,
  options: {
    concurrency: { type: "string", default: process.env.WHARF_TEST_CONCURRENCY },
    slowest: { type: "string", default: "20" },
  },
});
const concurrency = positiveInteger(options.concurrency, availableParallelism() + 1, "--concurrency");
const slowest = positiveInteger(options.slowest, 20, "--slowest");

const isConsolePath = (path) => relative(root, resolve(path)).startsWith("console");

/** Every *.test.ts under `dir` (repo-relative), skipping node_modules and generated code. */
function collect(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name === "gen") continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...collect(path));
    else if (name.endsWith(".test.ts")) out.push(relative(root, path));
  }
  return out;
}

/** A named file as is, a named folder as the test files in it (Node 20's runner takes no folders). */
function expand(path) {
  return statSync(path).isDirectory() ? collect(resolve(path)) : [relative(root, resolve(path))];
}

const nodePaths = paths.filter((p) => !isConsolePath(p));
const files = (
  paths.length > 0
    ? nodePaths.flatMap(expand)
    : [...collect(join(root, "src")), ...collect(join(root, "test"))]
).sort();
// Console tests run when everything runs, or when console paths are named (then only those).
const consolePaths = paths.filter(isConsolePath);
const runConsole = paths.length === 0 || consolePaths.length > 0;
if (files.length === 0 && !runConsole) {
  console.error("run-tests: no test files found");
  process.exit(1);
}

buildIfStale();

/**
 * Runs node:test over `files` with `env` added, unit files in batches; resolves with its exit code
 * and each file's (or batch's) wall time, named by its repo-relative path (or the batch's label).
 */
function runNodeTests(env) {
  const scratch = mkdtempSync(join(tmpdir(), "wharf-run-tests-"));
  const durationsFile = join(scratch, "durations.jsonl");
  const batches = unitBatches(
    files.filter((f) => f.startsWith("test/unit/")),
    concurrency,
    scratch,
    root,
  );
  const batched = new Set(batches.flatMap((b) => b.files));
  const entries = longestFirst(
    root,
    [...files.filter((f) => !batched.has(f)), ...batches.map((b) => b.entry)],
    (e) => nameOf(e, batches),
  );
  return new Promise((resolveRun) => {
    let output = "";
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--import",
        tsxInWorkers,
        "--test",
        `--test-concurrency=${concurrency}`,
        "--test-reporter=spec",
        "--test-reporter-destination=stdout",
        `--test-reporter=${durationsReporter}`,
        `--test-reporter-destination=${durationsFile}`,
        ...entries,
      ],
      {
        cwd: root,
        stdio: ["ignore", "pipe", "inherit"],
        // dist/ was built from src/ above: worker threads start from it (src/core/module-url.ts).
        env: { ...process.env, WHARF_TEST_WORKERS_FROM_DIST: "1", ...env },
      },
    );
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk);
      output += chunk.toString();
      if (output.length > 1_000_000) output = output.slice(-100_000);
    });
    child.on("close", (code) => {
      const durations = readDurations(durationsFile).map((d) => ({ ...d, file: nameOf(d.file, batches) }));
      rmSync(scratch, { recursive: true, force: true });
      const passed = Number(/ℹ pass (\d+)/.exec(output)?.[1] ?? 0);
      const failed = Number(/ℹ fail (\d+)/.exec(output)?.[1] ?? 0);
      const skipped = Number(/ℹ skipped (\d+)/.exec(output)?.[1] ?? 0);
      if (passed === 0) {
        console.error("run-tests: no test ran");
        code = 1;
      }
      resolveRun({
        code: code ?? 1,
        durations,
        summary: `${passed} passed, ${failed} failed, ${skipped} skipped`,
      });
    });
  });
}

/** How the report names an entry: a batch by its label, a file by its repo-relative path. */
function nameOf(entry, batches) {
  const path = resolve(root, entry);
  return batches.find((b) => b.entry === path)?.label ?? relative(root, path);
}

/** The reporter's lines: `{file, ms, ok}` for each file that finished. */
function readDurations(file) {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {}
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

/** Prints the `count` slowest files, slowest first. */
function printSlowest(durations, count) {
  const top = [...durations].sort((a, b) => b.ms - a.ms).slice(0, count);
  if (top.length === 0) return;
  console.log(
    `\nslowest ${top.length} of ${durations.length} test files (wall time, ${concurrency} at a time):`,
  );
  for (const { file, ms, ok } of top) {
    console.log(`${(ms / 1000).toFixed(1).padStart(7)} s  ${file}${ok ? "" : "  (failed)"}`);
  }
}

/** Runs the console's Vitest suite (or the named console paths); resolves with its exit code. */
function runConsoleTests() {
  return new Promise((resolveRun) => {
    const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
    const child = spawn(
      process.execPath,
      [vitest, "run", "--config", "console/vite.config.ts", ...consolePaths.map((p) => resolve(p))],
      { cwd: root, stdio: "inherit" },
    );
    child.on("close", (code) => resolveRun(code ?? 1));
  });
}

function positiveInteger(text, fallback, flag) {
  if (text === undefined || text === "") return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`run-tests: ${flag} must be a positive integer, not ${JSON.stringify(text)}`);
    process.exit(2);
  }
  return n;
}

const started = Date.now();
let nodeCode = 0;
if (files.length > 0) {
  register();
  const { startSharedPostgres } = await import("../test/support/shared-postgres.ts");
  const postgres = await startSharedPostgres();
  const run = await runNodeTests(postgres?.env ?? {});
  await postgres?.dispose();
  rememberDurations(root, run.durations);
  printSlowest(run.durations, slowest);
  console.log(
    `\n${run.summary} (${files.length} files in ${run.durations.length} processes, ${((Date.now() - started) / 1000).toFixed(0)} s)`,
  );
  nodeCode = run.code;
}
const consoleCode = runConsole ? await runConsoleTests() : 0;
// A throwaway PostgreSQL cluster stops on exit (test/support/postgres-cluster.ts).
process.exit(nodeCode !== 0 ? nodeCode : consoleCode);
