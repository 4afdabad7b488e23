// CLI start-up benchmark (`npm run bench:cli [-- <other checkout>...]`), with hyperfine (apt:
// hyperfine). Measures, for this checkout's bin/wharf.js and for each other checkout named (e.g. an
// older revision, to compare):
// - `wharf --help`, a cold process each run: target ≤ 300 ms;
// - `wharf serve` on an empty data dir, from spawn until GET /ping/v2/ping answers 200, run by
//   bench/cli/serve-until-ping.mjs (its own bare node start included, nothing subtracted): target
//   ≤ 1.5 s;
// - `wharf images tags list acme/app` and `wharf images history acme/app:latest` against a seeded
//   local server, cold processes, each beside curl fetching the same data (bench/cli/verbs.ts):
//   target median ≤ 400 ms.
// The bin files run as executables, so their shebang's node flags apply as they do for `npx wharf`.
// The npm script builds this checkout's dist/ first when stale. Environment: BENCH_RUNS (default
// 10) runs per command after 2 warm-up runs. Prints hyperfine's report and a summary; exits 0
// unless something failed (it is a report, not a test).
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { benchVerbs } from "./cli/verbs.js";

const run = promisify(execFile);
const root = resolve(new URL("..", import.meta.url).pathname);
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const TARGETS_MS = { help: 300, serve: 1500, verb: 400 };

interface HyperfineResult {
  command: string;
  mean: number;
  median: number;
  stddev: number | null;
  min: number;
  max: number;
}

/** hyperfine over `commands` (name → command line, no shell); its results in seconds. */
async function hyperfine(commands: Record<string, string>): Promise<HyperfineResult[]> {
  const dir = await mkdtemp(join(tmpdir(), "wharf-bench-cli-"));
  try {
    const json = join(dir, "results.json");
    const args = ["-N", "--warmup", "2", "--runs", String(RUNS), "--export-json", json];
    for (const [name, command] of Object.entries(commands)) args.push("--command-name", name, command);
    const hf = spawn("hyperfine", args, { stdio: "inherit" });
    const [code] = (await once(hf, "exit")) as [number | null];
    if (code !== 0) throw new Error(`hyperfine exited ${code}`);
    return (JSON.parse(await readFile(json, "utf8")) as { results: HyperfineResult[] }).results;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const ms = (seconds: number) => Math.round(seconds * 1000);

try {
  await run("hyperfine", ["--version"]);
} catch {
  console.error("bench:cli needs hyperfine (apt-get install hyperfine)");
  process.exit(1);
}

const trees = [root, ...process.argv.slice(2).map((tree) => resolve(tree))];
const serveUntilPing = join(root, "bench", "cli", "serve-until-ping.mjs");
const help: Record<string, string> = {};
const serve: Record<string, string> = {};
for (const tree of trees) {
  const wharf = join(tree, "bin", "wharf.js");
  help[`${tree}: wharf --help`] = `${wharf} --help`;
  serve[`${tree}: wharf serve until ping`] = `${process.execPath} ${serveUntilPing} ${wharf}`;
}
const targets = new Map([
  [`${root}: wharf --help`, TARGETS_MS.help],
  [`${root}: wharf serve until ping`, TARGETS_MS.serve],
]);
const results = [...(await hyperfine(help)), ...(await hyperfine(serve))];
// Everyday verbs (this checkout only): each beside curl fetching the same data, in one hyperfine run.
const verbs = await benchVerbs(root, hyperfine);
results.push(...verbs);
targets.set("wharf images tags list acme/app", TARGETS_MS.verb);
targets.set("wharf images history acme/app:latest", TARGETS_MS.verb);

console.log(`\nbench:cli, ${RUNS} runs each (median, mean ± sd, min–max; targets on the median):`);
for (const r of results) {
  const target = targets.get(r.command);
  const verdict =
    target === undefined ? "" : `; target ≤ ${target} ms ${ms(r.median) <= target ? "met" : "MISSED"}`;
  console.log(
    `  ${r.command}: median ${ms(r.median)}, mean ${ms(r.mean)} ± ${ms(r.stddev ?? 0)} ms, ${ms(r.min)}–${ms(r.max)} ms${verdict}`,
  );
}
