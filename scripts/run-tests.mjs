#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node:test, passing an explicit file list (Node 20
// finds no tests when given a directory), then the console's component tests (console/**/*.test.tsx)
// with Vitest. Explicit files run with the runner they belong to (console/… → Vitest). Exits
// non-zero when a test fails or when no test ran.
// Tests run src/ through tsx; those that spawn bin/wharf.js run dist/, so it is built first when stale.
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { buildIfStale } from "./build-if-stale.mjs";

const root = new URL("..", import.meta.url).pathname;
const tsxInWorkers = new URL("./tsx-in-workers.mjs", import.meta.url).pathname;
const only = process.argv.slice(2);
const isConsoleTest = (file) => file.replace(/^\.\//, "").startsWith("console/");

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

const files = (
  only.length > 0
    ? only.filter((f) => !isConsoleTest(f))
    : [...collect(join(root, "src")), ...collect(join(root, "test"))]
).sort();
// Console tests run when everything runs, or when console files are named (then only those).
const consoleFiles = only.length > 0 ? only.filter(isConsoleTest) : [];
const runConsole = only.length === 0 || consoleFiles.length > 0;
if (files.length === 0 && !runConsole) {
  console.error("run-tests: no test files found");
  process.exit(1);
}

buildIfStale();

/** Runs node:test over `files`; resolves with its exit code (non-zero also when no test ran). */
function runNodeTests() {
  return new Promise((resolve) => {
    let output = "";
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--import",
        tsxInWorkers,
        "--test",
        "--test-concurrency=1",
        "--test-reporter=spec",
        ...files,
      ],
      { cwd: root, stdio: ["ignore", "pipe", "inherit"] },
    );
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk);
      output += chunk.toString();
      if (output.length > 1_000_000) output = output.slice(-100_000);
    });
    child.on("close", (code) => {
      const passed = Number(/ℹ pass (\d+)/.exec(output)?.[1] ?? 0);
      const failed = Number(/ℹ fail (\d+)/.exec(output)?.[1] ?? 0);
      const skipped = Number(/ℹ skipped (\d+)/.exec(output)?.[1] ?? 0);
      console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
      if (passed === 0) {
        console.error("run-tests: no test ran");
        resolve(1);
      } else resolve(code ?? 1);
    });
  });
}

/** Runs the console's Vitest suite (or `consoleFiles` of it); resolves with its exit code. */
function runConsoleTests() {
  return new Promise((resolve) => {
    const vitest = join(root, "node_modules", "vitest", "vitest.mjs");
    const child = spawn(
      process.execPath,
      [vitest, "run", "--config", "console/vite.config.ts", ...consoleFiles.map((f) => join(root, f))],
      { cwd: root, stdio: "inherit" },
    );
    child.on("close", (code) => resolve(code ?? 1));
  });
}

const nodeCode = files.length > 0 ? await runNodeTests() : 0;
const consoleCode = runConsole ? await runConsoleTests() : 0;
process.exit(nodeCode !== 0 ? nodeCode : consoleCode);
