import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { unitBatches } from "../../../scripts/test-runner/batches.mjs";
import { longestFirst, rememberDurations } from "../../../scripts/test-runner/durations-cache.mjs";

const scratch = mkdtempSync(join(tmpdir(), "wharf-runner-test-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

describe("the test runner's unit batches", () => {
  it("deals the files out in turn, each batch an entry importing its files in order", () => {
    const files = [
      "test/unit/a.test.ts",
      "test/unit/b.test.ts",
      "test/unit/c.test.ts",
      "test/unit/d.test.ts",
      "test/unit/e.test.ts",
    ];
    const batches = unitBatches(files, 2, scratch, "/repo");
    assert.deepEqual(
      batches.map((b) => b.files),
      [
        ["test/unit/a.test.ts", "test/unit/c.test.ts", "test/unit/e.test.ts"],
        ["test/unit/b.test.ts", "test/unit/d.test.ts"],
      ],
    );
    assert.deepEqual(
      batches.map((b) => b.label),
      ["test/unit (batch 1 of 2)", "test/unit (batch 2 of 2)"],
    );
    const [first] = batches;
    assert.ok(first);
    const entry = readFileSync(first.entry, "utf8");
    assert.deepEqual(entry.trim().split("\n"), [
      'await import("file:///repo/test/unit/a.test.ts");',
      'await import("file:///repo/test/unit/c.test.ts");',
      'await import("file:///repo/test/unit/e.test.ts");',
    ]);
  });

  it("makes no batch of one file (or none), and no more batches than files", () => {
    assert.deepEqual(unitBatches(["test/unit/a.test.ts"], 3, scratch, "/repo"), []);
    assert.deepEqual(unitBatches([], 3, scratch, "/repo"), []);
    assert.equal(unitBatches(["test/unit/a.test.ts", "test/unit/b.test.ts"], 8, scratch, "/repo").length, 2);
  });
});

describe("the test runner's order: longest first", () => {
  it("orders by the remembered times, unknown end-to-end files first, others in their order", () => {
    const root = mkdtempSync(join(scratch, "root-"));
    const name = (e: string) => e;
    const entries = [
      "test/unit (batch 1 of 2)",
      "test/e2e/new.test.ts",
      "test/e2e/short.test.ts",
      "test/e2e/long.test.ts",
      "test/conformance/x.test.ts",
    ];
    assert.deepEqual(
      longestFirst(root, entries, name),
      [
        "test/e2e/new.test.ts",
        "test/e2e/short.test.ts",
        "test/e2e/long.test.ts",
        "test/unit (batch 1 of 2)",
        "test/conformance/x.test.ts",
      ],
      "nothing remembered yet: end-to-end files first, in their order",
    );
    rememberDurations(root, [
      { file: "test/e2e/short.test.ts", ms: 1_000 },
      { file: "test/e2e/long.test.ts", ms: 90_000 },
      { file: "test/unit (batch 1 of 2)", ms: 30_000 },
      { file: "test/conformance/x.test.ts", ms: 5_000 },
    ]);
    assert.deepEqual(longestFirst(root, entries, name), [
      "test/e2e/new.test.ts",
      "test/e2e/long.test.ts",
      "test/unit (batch 1 of 2)",
      "test/conformance/x.test.ts",
      "test/e2e/short.test.ts",
    ]);
  });
});
