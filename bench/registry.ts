// Registry data-plane benchmark (`npm run bench:registry`): 1 GiB blob push (monolithic and in
// 16 MiB chunks), 1 GiB pull and manifest GET req/s (wrk), for Wharf and for CNCF distribution
// (Debian's docker-registry 2.8 on loopback) in the same run, next to this machine's limits measured
// in the same run on the same file and disk: Node crypto sha256, dd write with fdatasync, warm cat,
// and a bare node:http server under the same wrk load. The bare server also runs the same upload and
// download requests the plain Node way (no auth, no metadata), which shows how much of a gap is
// Node's own cost, and sends bytes from memory to curl: the loopback reference for the pulls. Prints
// every figure, every ratio and each target with PASS/FAIL, and for a target stated against a
// limit, what it needs in absolute terms beside the nearest reference measured; exits 0 unless
// something errored (it is a report, not a test).
//
// Environment: BENCH_BLOB_MIB (default 1024), BENCH_CHUNK_MIB (16), BENCH_SECONDS (wrk duration, 10),
// BENCH_RUNS (3): every figure is measured that many times, interleaved between the servers, and
// the best run is compared (the median is printed next to it): machines are shared and noisy.
// BENCH_WORKERS=1,2: measures `wharf serve --workers N` on PostgreSQL instead (registry-workers.ts).
// BENCH_WHARF_NODE_FLAGS: extra node flags for the Wharf process, e.g. "--perf-basic-prof" to
// profile Wharf under exactly this load with `perf record -g -p <pid>` (ADR 0013).
//
// Wharf, distribution and the bare server each run in their own process; the client streams from
// this one with node:http, except the pull the targets use, which runs `curl -o /dev/null`: the
// node:http client reads 64 KiB per event into a new buffer each and tops out near 0.5–0.7 GB/s on
// a 2-core machine, below what the servers send; its pull is still measured and printed. Each push
// goes to a fresh repository after the previous push's blob bytes were removed from disk, so every
// push really writes and moves its blob.
import type { ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { removeBlobBytes } from "./registry/blob-bytes.js";
import {
  curlDownload,
  expect,
  OCI_MANIFEST,
  pullBlob,
  pullBlobCurl,
  pushChunked,
  pushMonolithic,
  pushSmallImage,
  type Registry,
  registry,
} from "./registry/client.js";
import { startDistribution } from "./registry/distribution.js";
import {
  catWarm,
  ddWrite,
  freePageReporting,
  sha256File,
  sync,
  writeRandomFile,
} from "./registry/machine.js";
import { type PolicyScenario, runPolicyScenario } from "./registry/policy-scenario.js";
import {
  cpuSecondsOf,
  firstJsonLine,
  onExit,
  type RssSummary,
  sampleRss,
  spawnTracked,
  stop,
} from "./registry/processes.js";
import type { WharfInfo } from "./registry/wharf-process.js";
import { type WrkResult, wrk } from "./registry/wrk.js";

const MiB = 1024 * 1024;
const BLOB_MIB = Number(process.env.BENCH_BLOB_MIB ?? 1024);
const CHUNK_MIB = Number(process.env.BENCH_CHUNK_MIB ?? 16);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const WARMUP_SECONDS = 2;
const WRK = { threads: 2, connections: 32 };
/** RSS growth during a transfer below which memory counts as flat. */
const FLAT_RSS_BYTES = 100 * MiB;

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const size = BLOB_MIB * MiB;
const chunk = CHUNK_MIB * MiB;
const mbps = (bytes: number, seconds: number) => bytes / 1e6 / seconds;

const D = "distribution";
const W = "wharf";
const N = "node:http";
const PUSH = "push monolithic";
const CHUNKED = `push ${CHUNK_MIB} MiB chunks`;
/** Pull measured with curl -o /dev/null (the targets), and with this process's node:http client. */
const PULL = "pull (curl)";
const PULL_NODE = "pull (node client)";
const TRANSFERS = [PUSH, CHUNKED, PULL, PULL_NODE];

/** A server under test. */
interface Subject {
  reg: Registry;
  pid: number;
  /** Folder whose `…/blobs/…/<hex>` entries hold blob bytes. */
  store: string;
  /** The manifest GET URL and headers for wrk. */
  manifestUrl: string;
  manifestHeaders: Record<string, string>;
}

interface Transfer {
  seconds: number;
  mbps: number;
  rss: RssSummary;
  /** CPU seconds the server process used (all threads), per GiB moved. */
  cpuPerGiB: number;
}

interface Load extends WrkResult {
  /** CPU microseconds the server process used per request. */
  cpuPerRequestUs: number;
}

function spawnNode(script: string, args: string[], what: string, nodeFlags: string[] = []): ChildProcess {
  const argv = [...nodeFlags, "--import", "tsx", join(here, "registry", script), ...args];
  const child = spawnTracked(process.execPath, argv, {
    cwd: root,
    stdio: ["pipe", "pipe", "inherit"],
  });
  child.on("error", (err) => console.error(`${what}: ${err.message}`));
  return child;
}

async function timedTransfer(subject: Subject, op: () => Promise<void>): Promise<Transfer> {
  await sync();
  const sampler = sampleRss(subject.pid);
  const cpu = cpuSecondsOf(subject.pid);
  const started = performance.now();
  let seconds: number;
  try {
    await op();
    seconds = (performance.now() - started) / 1000;
  } finally {
    sampler.stop();
  }
  const cpuPerGiB = (cpuSecondsOf(subject.pid) - cpu) / (size / (1024 * MiB));
  return { seconds, mbps: mbps(size, seconds), rss: sampler.stop(), cpuPerGiB };
}

/** Pushes a one-layer image tagged `latest` (1 KiB layer), and checks a GET returns its manifest. */
async function pushManifest(reg: Registry, repo: string): Promise<void> {
  const { manifest } = await pushSmallImage(reg, repo, 1024);
  const got = await expect(reg, 200, "GET", `/v2/${repo}/manifests/latest`, { accept: OCI_MANIFEST });
  if (!got.body.equals(manifest)) throw new Error(`${reg.name}: manifest GET returned other bytes`);
}

/** A warm-up wrk run, then the measured one, with the server's CPU time over the measured one. */
async function load(subject: Subject): Promise<Load> {
  const opts = { ...WRK, headers: subject.manifestHeaders };
  await wrk(subject.manifestUrl, { ...opts, seconds: WARMUP_SECONDS });
  const cpu = cpuSecondsOf(subject.pid);
  const result = await wrk(subject.manifestUrl, { ...opts, seconds: SECONDS });
  return { ...result, cpuPerRequestUs: ((cpuSecondsOf(subject.pid) - cpu) / result.requests) * 1e6 };
}

/** Best of the runs (highest throughput) and the median. */
interface Figure {
  best: number;
  median: number;
}

function figure(runs: number[]): Figure {
  const sorted = [...runs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { best: Math.max(...runs), median };
}

/** Measurements keyed by operation and server. */
class Results<T> {
  readonly #values = new Map<string, T[]>();
  add(op: string, name: string, value: T): void {
    const key = `${op}\u0000${name}`;
    this.#values.set(key, [...(this.#values.get(key) ?? []), value]);
  }
  all(op: string, name: string): T[] {
    return this.#values.get(`${op}\u0000${name}`) ?? [];
  }
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
const x = (n: number) => `${fmt(n, 2)}×`;
const mib = (bytes: number) => `${fmt(bytes / MiB, 1)} MiB`;

async function main(): Promise<void> {
  if (!(BLOB_MIB > 0 && CHUNK_MIB > 0 && SECONDS > 0 && RUNS >= 1)) {
    throw new Error("BENCH_BLOB_MIB, BENCH_CHUNK_MIB, BENCH_SECONDS and BENCH_RUNS must be positive numbers");
  }
  const work = await mkdtemp(join(tmpdir(), "wharf-bench-registry-"));
  onExit(() => rmSync(work, { recursive: true, force: true }));
  const children: ChildProcess[] = [];
  try {
    console.log(
      `work dir ${work}; blob ${BLOB_MIB} MiB, chunks ${CHUNK_MIB} MiB, wrk ${SECONDS} s, ${RUNS} runs`,
    );
    const blobFile = join(work, "blob.bin");
    console.log("writing the random blob file…");
    await writeRandomFile(blobFile, size);

    // This machine's limits, on the same file and disk.
    const shaRuns: number[] = [];
    const ddRuns: number[] = [];
    const catRuns: number[] = [];
    let digest = "";
    for (let run = 1; run <= RUNS; run++) {
      const sha = await sha256File(blobFile);
      digest = sha.digest;
      shaRuns.push(mbps(size, sha.seconds));
      await sync();
      const dd = await ddWrite(join(work, "dd.bin"), size);
      ddRuns.push(mbps(dd.bytes, dd.seconds));
      catRuns.push(mbps(size, await catWarm(blobFile)));
      console.log(
        `run ${run}: sha256 ${fmt(shaRuns.at(-1) as number)} MB/s, dd ${fmt(ddRuns.at(-1) as number)} MB/s, cat ${fmt(catRuns.at(-1) as number)} MB/s`,
      );
    }
    const hex = digest.slice("sha256:".length);
    const limits = { sha256: figure(shaRuns), dd: figure(ddRuns), cat: figure(catRuns) };

    // The servers, each in its own process.
    const distDir = join(work, "distribution");
    await mkdir(distDir);
    const dist = await startDistribution(distDir);
    children.push(dist.child);

    const wharfDir = join(work, "wharf");
    await mkdir(wharfDir);
    // The same V8 flag bin/wharf.js runs the server with, plus any from the environment.
    const wharfFlags = [
      "--initial-old-space-size=128",
      ...(process.env.BENCH_WHARF_NODE_FLAGS ?? "").split(" "),
    ].filter((f) => f !== "");
    const wharfChild = spawnNode(
      "wharf-process.ts",
      [wharfDir, join(work, "wharf.log")],
      "wharf",
      wharfFlags,
    );
    children.push(wharfChild);
    const wharf = await firstJsonLine<WharfInfo>(wharfChild, "wharf");
    const org = await fetch(`${wharf.apiUrl}/iam/v2/groups`, {
      method: "POST",
      headers: { authorization: `Bearer ${wharf.apiToken}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "bench" }),
    });
    if (org.status !== 200) throw new Error(`creating organization bench: ${org.status} ${await org.text()}`);

    const bareDir = join(work, "node", "blobs");
    await mkdir(bareDir, { recursive: true });
    const bareChild = spawnNode("bare-http.ts", [bareDir], "bare node:http");
    children.push(bareChild);
    const bare = await firstJsonLine<{ pid: number; url: string; bytes: number }>(
      bareChild,
      "bare node:http",
    );

    const manifestPath = "/v2/bench/app/manifests/latest";
    const wharfAuth = { authorization: `Bearer ${wharf.registryToken}` };
    const subjects: Record<string, Subject> = {
      [D]: {
        reg: registry(D, dist.url),
        pid: dist.pid,
        store: dist.root,
        manifestUrl: `${dist.url}${manifestPath}`,
        manifestHeaders: { accept: OCI_MANIFEST },
      },
      [W]: {
        reg: registry(W, wharf.registryUrl, wharfAuth),
        pid: wharf.pid,
        store: wharfDir,
        manifestUrl: `${wharf.registryUrl}${manifestPath}`,
        manifestHeaders: { ...wharfAuth, accept: OCI_MANIFEST },
      },
      [N]: {
        reg: registry(N, bare.url),
        pid: bare.pid,
        store: bareDir,
        manifestUrl: bare.url,
        manifestHeaders: {},
      },
    };
    const all = Object.values(subjects);
    console.log(`distribution ${dist.url} (pid ${dist.pid}); wharf ${wharf.registryUrl} (pid ${wharf.pid})`);

    // Transfers, interleaved run by run so that load from elsewhere spreads over every server.
    const transfers = new Results<Transfer>();
    const loopbackRuns: number[] = [];
    const measure = async (op: string, s: Subject, fn: () => Promise<void>) => {
      const t = await timedTransfer(s, fn);
      transfers.add(op, s.reg.name, t);
      console.log(`run ${transfers.all(op, s.reg.name).length}: ${s.reg.name} ${op} ${fmt(t.mbps)} MB/s`);
    };
    const removeBytes = async (s: Subject) => {
      if ((await removeBlobBytes(s.store, hex)) === 0) {
        throw new Error(`${s.reg.name}: the pushed blob is not on disk under ${s.store}`);
      }
    };
    for (let run = 0; run < RUNS; run++) {
      for (const s of all) {
        await measure(PUSH, s, () => pushMonolithic(s.reg, `bench/mono-${run}`, blobFile, size, digest));
        await removeBytes(s);
      }
      for (const s of all) {
        await measure(CHUNKED, s, async () => {
          await pushChunked(s.reg, `bench/chunked-${run}`, blobFile, size, digest, chunk);
        });
      }
      for (const [op, pull] of [
        [PULL, pullBlobCurl],
        [PULL_NODE, pullBlob],
      ] as const) {
        for (const s of all) {
          await measure(op, s, async () => {
            const received = await pull(s.reg, `bench/chunked-${run}`, digest);
            if (received !== size)
              throw new Error(`${s.reg.name}: ${op} returned ${received} bytes, not ${size}`);
          });
        }
      }
      for (const s of all) await removeBytes(s);
      const started = performance.now();
      const received = await curlDownload((subjects[N] as Subject).reg, `/loopback/${size}`);
      if (received !== size)
        throw new Error(`loopback reference: curl received ${received} bytes, not ${size}`);
      loopbackRuns.push(mbps(size, (performance.now() - started) / 1000));
      console.log(
        `run ${run + 1}: memory → curl over loopback (node:http) ${fmt(loopbackRuns.at(-1) as number)} MB/s`,
      );
    }

    // Manifest GET under wrk; the bare server answers its JSON body under the same load.
    for (const s of [subjects[D], subjects[W]] as Subject[]) await pushManifest(s.reg, "bench/app");
    const loads = new Results<Load>();
    for (let run = 1; run <= RUNS; run++) {
      for (const s of all) {
        const result = await load(s);
        loads.add("GET", s.reg.name, result);
        console.log(`run ${run}: ${s.reg.name} GET ${fmt(result.rps, 0)} req/s (errors ${result.errors})`);
      }
    }

    // Pull policies (ADR 0058): the same GET by a caller policies apply to, without and with one.
    const policies = await runPolicyScenario({
      ...{ wharf, wharfDir, work, root, runs: RUNS, seconds: SECONDS, warmupSeconds: WARMUP_SECONDS },
      wrkOptions: WRK,
      log: (line) => console.log(line),
    });

    report({
      limits: { ...limits, loopback: figure(loopbackRuns) },
      bareBytes: bare.bytes,
      transfers,
      loads,
      pageReporting: await freePageReporting(),
    });
    reportPolicies(policies);
  } finally {
    for (const child of children.reverse()) await stop(child);
    await rm(work, { recursive: true, force: true });
  }
}

function report(r: {
  /** `loopback`: what curl receives over loopback from a server sending one buffer (the pull reference). */
  limits: { sha256: Figure; dd: Figure; cat: Figure; loopback: Figure };
  bareBytes: number;
  transfers: Results<Transfer>;
  loads: Results<Load>;
  /** Free page reporting, when this machine has it (write figures then vary with memory state). */
  pageReporting: string | undefined;
}): void {
  const rate = (op: string, name: string) => figure(r.transfers.all(op, name).map((t) => t.mbps));
  const rps = (name: string) => figure(r.loads.all("GET", name).map((l) => l.rps));
  const errors = (name: string) => r.loads.all("GET", name).reduce((sum, l) => sum + l.errors, 0);
  const median = (values: number[]) => figure(values).median;
  const pushLimit = Math.min(r.limits.sha256.best, r.limits.dd.best);
  const lines: string[] = [];
  const out = (line = "") => lines.push(line);
  const cell = (f: Figure, digits = 1) => `${fmt(f.best, digits)} (${fmt(f.median, digits)})`.padStart(17);

  out();
  out(
    `=== Registry benchmark: ${BLOB_MIB} MiB blob, ${CHUNK_MIB} MiB chunks, wrk -t${WRK.threads} -c${WRK.connections} -d${SECONDS}s, best of ${RUNS} runs (median) ===`,
  );
  out("MB = 10^6 bytes. Ratios and targets use the best run of each figure.");
  out();
  out("This machine, same run:");
  out(`  Node crypto sha256 over the file       ${cell(r.limits.sha256)} MB/s`);
  out(`  dd write (bs=16M, conv=fdatasync)      ${cell(r.limits.dd)} MB/s`);
  out(`  cat warm read (> /dev/null)            ${cell(r.limits.cat)} MB/s`);
  out(`  min(sha256, dd write)                  ${fmt(pushLimit).padStart(17)} MB/s`);
  out(`  memory → curl over loopback (node:http)${cell(r.limits.loopback)} MB/s`);
  if (r.pageReporting) {
    out(`  free page reporting: ${r.pageReporting}; new data written into memory the host took back`);
    out("  goes at its page-fault speed, so dd and push figures swing from run to run");
  }
  out(`  bare node:http, ${r.bareBytes} B JSON           ${cell(rps(N), 0)} req/s  (errors ${errors(N)})`);
  out();
  out(
    `  ${"".padEnd(26)} ${D.padStart(17)} ${W.padStart(17)} ${"bare node:http".padStart(17)} ${"wharf/dist".padStart(11)} ${"wharf/node".padStart(11)}`,
  );
  const row = (label: string, d: Figure, w: Figure, n: Figure, digits = 1) =>
    out(
      `  ${label.padEnd(26)} ${cell(d, digits)} ${cell(w, digits)} ${cell(n, digits)} ${x(w.best / d.best).padStart(11)} ${x(w.best / n.best).padStart(11)}`,
    );
  for (const op of TRANSFERS) row(`${op} MB/s`, rate(op, D), rate(op, W), rate(op, N));
  row("manifest GET req/s", rps(D), rps(W), rps(N), 0);
  out(
    `  ${"manifest GET errors".padEnd(26)} ${String(errors(D)).padStart(17)} ${String(errors(W)).padStart(17)} ${String(errors(N)).padStart(17)}`,
  );
  out(
    "  (bare node:http: the same requests done the plain Node way — no auth, no metadata, a JSON body for GET)",
  );
  out();
  out("Ratios to this machine's limits (best runs):");
  const ratio = (label: string, f: (name: string) => number) =>
    out(
      `  ${label.padEnd(36)} distribution ${x(f(D)).padStart(7)}   wharf ${x(f(W)).padStart(7)}   bare node:http ${x(f(N)).padStart(7)}`,
    );
  ratio("push monolithic / min(sha256, dd)", (n) => rate(PUSH, n).best / pushLimit);
  ratio("push chunked / min(sha256, dd)", (n) => rate(CHUNKED, n).best / pushLimit);
  ratio("push monolithic / sha256", (n) => rate(PUSH, n).best / r.limits.sha256.best);
  ratio("push monolithic / dd write", (n) => rate(PUSH, n).best / r.limits.dd.best);
  ratio("push chunked / push monolithic", (n) => rate(CHUNKED, n).best / rate(PUSH, n).best);
  ratio("pull (curl) / cat", (n) => rate(PULL, n).best / r.limits.cat.best);
  ratio("pull (node client) / cat", (n) => rate(PULL_NODE, n).best / r.limits.cat.best);
  ratio("manifest GET / bare node:http JSON", (n) => rps(n).best / rps(N).best);
  out();
  out("Server CPU, user + system over all threads (median run; steadier than rates on a busy machine):");
  const cpuRow = (label: string, unit: string, f: (name: string) => number, digits: number) =>
    out(
      `  ${label.padEnd(26)} ${unit.padEnd(7)} distribution ${fmt(f(D), digits).padStart(6)}   wharf ${fmt(f(W), digits).padStart(6)}   bare node:http ${fmt(f(N), digits).padStart(6)}   wharf/dist ${x(f(W) / f(D))}`,
    );
  for (const op of TRANSFERS) {
    cpuRow(op, "s/GiB", (n) => median(r.transfers.all(op, n).map((t) => t.cpuPerGiB)), 2);
  }
  cpuRow("manifest GET", "µs/req", (n) => median(r.loads.all("GET", n).map((l) => l.cpuPerRequestUs)), 0);
  out();
  out("Resident memory of each server during the transfers (sampled every 100 ms; worst run):");
  const rssOf = (op: string, name: string) => {
    const runs = r.transfers.all(op, name);
    return {
      start: Math.max(...runs.map((t) => t.rss.start)),
      max: Math.max(...runs.map((t) => t.rss.max)),
      growth: Math.max(...runs.map((t) => t.rss.growth)),
    };
  };
  for (const op of TRANSFERS) {
    for (const name of [D, W, N]) {
      const m = rssOf(op, name);
      out(
        `  ${`${name} ${op}`.padEnd(36)} start ${mib(m.start).padStart(10)}  max ${mib(m.max).padStart(10)}  growth ${mib(m.growth).padStart(10)}`,
      );
    }
  }
  out();
  out("Targets (wharf):");
  // What each target asks for in absolute terms, next to the nearest reference measured in this
  // run, so a reader can tell a slow Wharf from a target this machine's loopback or Node itself
  // does not reach.
  const pullNeeds = 0.3 * r.limits.cat.best;
  const getNeeds = 10 * rps(D).best;
  const pushNeeds = 0.6 * pushLimit;
  const targets: Array<[string, number, number, string?]> = [
    [
      "push ≥ 0.6× min(sha256, dd write)",
      rate(PUSH, W).best / pushLimit,
      0.6,
      `needs ${fmt(pushNeeds, 0)} MB/s; bare node:http (receive, hash, write, nothing else) ${fmt(rate(PUSH, N).best, 0)} MB/s`,
    ],
    ["push vs distribution (≈ 3× expected)", rate(PUSH, W).best / rate(PUSH, D).best, Number.NaN],
    ["chunked push ≥ 0.8× monolithic", rate(CHUNKED, W).best / rate(PUSH, W).best, 0.8],
    ["pull (curl) ≥ 1.0× distribution", rate(PULL, W).best / rate(PULL, D).best, 1.0],
    [
      "pull (curl) ≥ 0.3× cat",
      rate(PULL, W).best / r.limits.cat.best,
      0.3,
      `needs ${fmt(pullNeeds, 0)} MB/s; memory → curl over loopback ${fmt(r.limits.loopback.best, 0)} MB/s`,
    ],
    ["pull (node client) vs distribution", rate(PULL_NODE, W).best / rate(PULL_NODE, D).best, Number.NaN],
    ["pull (node client) vs cat", rate(PULL_NODE, W).best / r.limits.cat.best, Number.NaN],
    ["pull (curl) vs memory → curl over loopback", rate(PULL, W).best / r.limits.loopback.best, Number.NaN],
    [
      "manifest GET ≥ 10× distribution",
      rps(W).best / rps(D).best,
      10,
      `needs ${fmt(getNeeds, 0)} req/s = ${x(getNeeds / rps(N).best)} of bare node:http answering a constant`,
    ],
    ["manifest GET ≥ 0.25× bare node:http", rps(W).best / rps(N).best, 0.25],
  ];
  let failed = 0;
  const line = (status: string, label: string, value: string) =>
    out(`  ${status.padEnd(4)}  ${label.padEnd(56)} ${value}`);
  for (const [label, value, target, context] of targets) {
    if (Number.isNaN(target)) {
      line("info", label, `${fmt(value, 3)}×`);
      continue;
    }
    const ok = value >= target;
    if (!ok) failed++;
    line(
      ok ? "PASS" : "FAIL",
      label,
      `${fmt(value, 3)}× (target ${target}×)${context ? `  [${context}]` : ""}`,
    );
  }
  if (errors(W) > 0) {
    failed++;
    line("FAIL", "manifest GET without errors", `${errors(W)} errors`);
  }
  for (const op of TRANSFERS) {
    const growth = rssOf(op, W).growth;
    const ok = growth < FLAT_RSS_BYTES;
    if (!ok) failed++;
    line(ok ? "PASS" : "FAIL", `RSS flat during ${op} (growth < ${FLAT_RSS_BYTES / MiB} MiB)`, mib(growth));
  }
  out();
  out(failed === 0 ? "all targets met" : `${failed} target(s) missed`);
  console.log(lines.join("\n"));
}

/** The pull-policy figures: best and median req/s of each side, their ratio, CPU per request (target ≥ 0.8×). */
function reportPolicies(p: PolicyScenario): void {
  const none = figure(p.none.map((l) => l.rps));
  const withPolicy = figure(p.policy.map((l) => l.rps));
  const cpu = (loads: { cpuPerRequestUs: number }[]) => figure(loads.map((l) => l.cpuPerRequestUs)).median;
  console.log("\npull policies (manifest GET by a non-admin caller, bench/gated:3.12)");
  console.log(
    `  no policy                     ${fmt(none.best, 0)} req/s (median ${fmt(none.median, 0)}), ${fmt(cpu(p.none))} µs/req server CPU`,
  );
  console.log(
    `  ENFORCE policy, every rule    ${fmt(withPolicy.best, 0)} req/s (median ${fmt(withPolicy.median, 0)}), ${fmt(cpu(p.policy))} µs/req server CPU`,
  );
  const ratio = withPolicy.best / none.best;
  console.log(
    `  ratio with / without          ${x(ratio)} req/s, ${x(cpu(p.policy) / cpu(p.none))} CPU per request`,
  );
  console.log(`  ${ratio >= 0.8 ? "PASS" : "FAIL"} manifest GET with every policy rule ≥ 0.8× no policy`);
  const errors = [...p.none, ...p.policy].reduce((n, l) => n + l.errors, 0);
  if (errors > 0) console.log(`  FAIL ${errors} errors during the policy loads`);
}

if (process.env.BENCH_WORKERS) {
  await (await import("./registry-workers.js")).runRegistryWorkers(process.env.BENCH_WORKERS);
} else {
  await main();
}
