import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { moduleUrl, workerExecArgv } from "../../../src/core/module-url.js";

const FLAG = "WHARF_TEST_WORKERS_FROM_DIST";

/** Runs `body` with the flag set to `value` (deleted when undefined), then restores it. */
function withFlag<T>(value: string | undefined, body: () => T): T {
  const before = process.env[FLAG];
  if (value === undefined) delete process.env[FLAG];
  else process.env[FLAG] = value;
  try {
    return body();
  } finally {
    if (before === undefined) delete process.env[FLAG];
    else process.env[FLAG] = before;
  }
}

describe("moduleUrl", () => {
  // A project with src/workers/x.ts compiled to dist/workers/x.js, and src/workers/y.ts not compiled.
  const root = mkdtempSync(join(tmpdir(), "wharf-module-url-"));
  after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, "src", "core"), { recursive: true });
  mkdirSync(join(root, "src", "workers"), { recursive: true });
  mkdirSync(join(root, "dist", "workers"), { recursive: true });
  writeFileSync(join(root, "src", "workers", "x.ts"), "");
  writeFileSync(join(root, "dist", "workers", "x.js"), "");
  const tsBase = pathToFileURL(join(root, "src", "core", "here.ts")).href;
  const jsBase = pathToFileURL(join(root, "dist", "core", "here.js")).href;

  it("takes the caller's extension: .ts from src/, .js from dist/", () => {
    withFlag(undefined, () => {
      assert.equal(moduleUrl("../workers/x", tsBase).pathname, join(root, "src", "workers", "x.ts"));
      assert.equal(moduleUrl("../workers/x", jsBase).pathname, join(root, "dist", "workers", "x.js"));
    });
  });

  it("maps a src/ module to its dist/ twin when the test runner asks and the twin exists", () => {
    withFlag("1", () => {
      assert.equal(moduleUrl("../workers/x", tsBase).pathname, join(root, "dist", "workers", "x.js"));
      // Not compiled: stays on the source, which tsx runs.
      assert.equal(moduleUrl("../workers/y", tsBase).pathname, join(root, "src", "workers", "y.ts"));
      assert.equal(moduleUrl("../workers/x", jsBase).pathname, join(root, "dist", "workers", "x.js"));
    });
    withFlag("0", () => {
      assert.equal(moduleUrl("../workers/x", tsBase).pathname, join(root, "src", "workers", "x.ts"));
    });
  });
});

describe("workerExecArgv", () => {
  it("under tsx keeps only the non-tsx module options for a JavaScript entry", () => {
    const saved = process.execArgv;
    process.execArgv = [
      "--import",
      "tsx",
      "--initial-old-space-size=128",
      "--import=/x/tsx-in-workers.mjs",
      "--import",
      "./other.mjs",
      "--conditions=dev",
    ];
    try {
      assert.deepEqual(workerExecArgv(new URL("file:///app/dist/workers/x.js")), [
        "--import=./other.mjs",
        "--conditions=dev",
      ]);
      // A TypeScript entry inherits everything (undefined), tsx included.
      assert.equal(workerExecArgv(new URL("file:///app/test/support/x.ts")), undefined);
      // No tsx to drop: inherited, as Node refuses some flags given to a worker explicitly.
      process.execArgv = ["--initial-old-space-size=128"];
      assert.equal(workerExecArgv(new URL("file:///app/dist/workers/x.js")), undefined);
    } finally {
      process.execArgv = saved;
    }
  });
});
