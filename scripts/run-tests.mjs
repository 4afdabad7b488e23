#!/usr/bin/env node
// Runs every *.test.ts under src/ and test/ with node:test, passing an explicit file list (Node 20
// finds no tests when given a directory). Exits non-zero when a test fails or when no test ran.
// Tests run src/ through tsx; those that spawn bin/wharf.js run dist/, so it is built first when stale.
import { spawn } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { buildIfStale } from "./build-if-stale.mjs";

const root = new URL("..", import.meta.url).pathname;
const tsxInWorkers = new URL("./tsx-in-workers.mjs", import.meta.url).pathname;
const only = process.argv.slice(2);

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
  only.length > 0 ? only : [...collect(join(root, "src")), ...collect(join(root, "test"))]
).sort();
if (files.length === 0) {
  console.error("run-tests: no test files found");
  process.exit(1);
}

buildIfStale();

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
    process.exit(1);
  }
  process.exit(code ?? 1);
});
