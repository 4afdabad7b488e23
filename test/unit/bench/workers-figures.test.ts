import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, it } from "node:test";
import { processTreeOf, treeCpuSecondsOf } from "../../../bench/registry/processes.js";
import { ByWorkers, scaling, spread, workerCounts, workersTable } from "../../../bench/workers/figures.js";

// The workers dimension of the benches: which counts run, how repeated figures print, and the CPU
// of a primary with its workers.

describe("bench workers figures", () => {
  it("reads BENCH_WORKERS as distinct ascending counts and refuses anything else", () => {
    assert.deepEqual(workerCounts("2,1,2", 8), [1, 2]);
    assert.deepEqual(workerCounts("auto", 4), [1, 4]);
    assert.deepEqual(workerCounts("auto", 1), [1]);
    for (const bad of ["", "0", "1,x", "1.5", "65"]) {
      assert.throws(() => workerCounts(bad, 2), /BENCH_WORKERS must be/, bad);
    }
  });

  it("prints the median with the spread, never the best run alone", () => {
    assert.equal(spread([300, 100, 200]), "200 (100–300)");
    assert.equal(spread([1.5, 2.5], 1), "2.0 (1.5–2.5)");
    assert.equal(spread([42]), "42");
  });

  it("tabulates each count and compares the highest with the lowest", () => {
    const f = new ByWorkers();
    for (const [n, rps] of [
      [1, 100],
      [1, 120],
      [2, 150],
      [2, 170],
    ] as const) {
      f.add("GET", n, rps);
    }
    const table = workersTable([1, 2], f, [["GET req/s", "GET", 0]], 16);
    assert.deepEqual(table, ["workers  GET req/s", "1        110 (100–120)", "2        160 (150–170)"]);
    assert.equal(scaling([1, 2], f, [["GET", "GET"]]), "2 workers / 1 (medians): GET 1.45×");
    assert.equal(scaling([2], f, [["GET", "GET"]]), "");
    f.addLoad("list", 1, { rps: 50, cpuUs: 300, machineBusy: 0.85 });
    assert.deepEqual([f.all("list", 1), f.all("list cpu", 1), f.all("list busy", 1)], [[50], [300], [85]]);
  });

  it("sums the CPU of a process and of its children", async () => {
    // A parent that starts a busy child and itself sleeps: the child's CPU counts for the tree.
    const parent = spawn(
      process.execPath,
      [
        "-e",
        `const c = require("node:child_process").spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "inherit" });
         console.log(c.pid); process.on("SIGTERM", () => { c.kill("SIGKILL"); process.exit(0); }); setInterval(() => {}, 1000);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    try {
      const childPid = await new Promise<number>((resolve) =>
        parent.stdout?.once("data", (c: Buffer) => resolve(Number(c.toString().trim()))),
      );
      const parentPid = parent.pid as number;
      assert.deepEqual(processTreeOf(parentPid), [parentPid, childPid]);
      const start = treeCpuSecondsOf(parentPid);
      const deadline = Date.now() + 10_000;
      while (treeCpuSecondsOf(parentPid) - start < 0.3) {
        assert.ok(Date.now() < deadline, "the busy child's CPU never reached the tree's sum");
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      const exited = new Promise((r) => parent.once("exit", r));
      parent.kill("SIGTERM");
      await exited;
    }
  });
});
