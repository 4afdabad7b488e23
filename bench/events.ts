// Events benchmark (`npm run bench:events`): CloudEvents webhook delivery and the cost of the outbox
// on the write path, on embedded defaults (SQLite in a temp dir, default dispatcher options).
//
// 1. Delivery throughput. An organization with BENCH_SINKS (10) subscriptions to a loopback
//    receiver. Tag creates (POST /registry/v2/tags/<repo>, one `tag.created` event each) are
//    produced through the API at a steady BENCH_EVENT_RATE (500/s, open loop) for BENCH_SECONDS
//    (10), after an unmeasured warm-up at the same rate for BENCH_WARMUP_SECONDS (3) that is
//    drained before the measurement starts (a fresh process answers and delivers several times
//    slower until its code is compiled; a server in production is warm); measured: the rate at
//    which events reached all sinks while producing (from the second second on), the backlog when
//    production stopped, and how long it took to drain. Then a burst of BENCH_BURST (2000)
//    events, created as fast as BENCH_CONCURRENCY (32) clients can, timed until all
//    BURST × SINKS deliveries arrived.
// 2. Outbox write overhead. Tag-create req/s of BENCH_CONCURRENCY closed-loop clients (a separate
//    process, like bench:api's load) in an organization WITHOUT subscriptions vs one WITH one
//    subscription to the receiver (events written and delivered concurrently, as in production),
//    interleaved BENCH_RUNS (3) times after an unmeasured warm-up of both, BENCH_SECONDS each; the
//    best run of each is compared (the median is printed next to it). After each run with a
//    subscription the backlog is drained before the next run starts, so a run never pays for the
//    previous one's deliveries; Wharf's CPU per create with its delivery (load + drain) is printed
//    too, since 32 writers keep the one lane from delivering much while they run.
//
// Processes: Wharf (bench/registry/wharf-process.ts: startServer on defaults, a request log file
// as `wharf serve` writes to stdout), the receiver (bench/events/receiver.ts: plain node:http
// answering 200) and the write-load generator each run in their own process; this one produces the
// steady and burst events and reads the receiver's counts. On a 2-core machine the receiver and the
// producers take CPU from Wharf, as a sink and clients on the same host would: each figure below
// also prints Wharf's own CPU time, and the report ends with the CPU one event loop would need for
// the steady target at this run's costs. BENCH_WHARF_NODE_FLAGS: extra node flags for the Wharf
// process (e.g. "--perf-basic-prof" for `perf record -g -p <pid>`, which attributes CPU per thread
// correctly where a "--cpu-prof" profile does not: ADR 0013); BENCH_PHASES: a comma-separated
// subset of steady,burst,overhead to run (to profile one). Prints every figure and each target with
// PASS/FAIL; exits 0 unless something errored (it is a report, not a test).
import { execFile } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { pushSmallImage, type Registry, registry } from "./registry/client.js";
import { cpuSecondsOf, firstJsonLine, onExit, spawnTracked, stop } from "./registry/processes.js";
import type { WharfInfo } from "./registry/wharf-process.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RATE = Number(process.env.BENCH_EVENT_RATE ?? 500);
const SINKS = Number(process.env.BENCH_SINKS ?? 10);
const BURST = Number(process.env.BENCH_BURST ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 3);
/** Which measurements to run (for profiling one of them): steady, burst, overhead. */
const PHASES = new Set((process.env.BENCH_PHASES ?? "steady,burst,overhead").split(",").map((p) => p.trim()));
/** Targets. */
const DRAIN_TARGET_S = 2;
const OVERHEAD_TARGET = 0.87;
/** The steady rate counts as met within this factor (timer granularity of an open-loop producer). */
const RATE_TOLERANCE = 0.98;
/** Requests in flight above which the steady producer stops sending (the server fell behind). */
const MAX_IN_FLIGHT = 1000;
/**
 * Connections the producers use: requests beyond them wait in this process (as they would in many
 * separate clients), not in Wharf's accept queue, which overflows (ECONNRESET) with a thousand.
 */
const API_SOCKETS = 64;
/** How long to wait for a backlog to drain before giving up. */
const DRAIN_TIMEOUT_MS = 180_000;

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const run = promisify(execFile);

interface PhaseStats {
  deliveries: number;
  duplicates: number;
  complete: number;
  lastCompleteAt: number;
}

interface WriteLoad {
  rps: number;
  requests: number;
  errors: number;
  meanLatencyMs: number;
  p99LatencyMs: number;
  created: number;
  firstError: string;
  clientCpuUs: number;
  allRequests: number;
}

/** A write-load run with Wharf's CPU time per request and, with a subscription, its delivery. */
interface WriteRun extends WriteLoad {
  serverCpuUs: number;
  /** Events not yet delivered when the load stopped. */
  backlog: number;
  /** Seconds from the end of the load until its last event was delivered. */
  drainSeconds: number;
  /** Wharf's CPU per created tag, its delivery included (load and drain), µs. */
  cpuWithDeliveryUs: number;
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0
    ? Number.NaN
    : (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] as number);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** A small JSON client of the API (and of the receiver's stats). */
function jsonClient(base: string, token?: string, maxSockets = 64) {
  const agent = new Agent({ keepAlive: true, maxSockets });
  const call = (method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const target = new URL(path, base);
      const req = request(
        target,
        {
          method,
          agent,
          headers: {
            ...(token ? { authorization: `Bearer ${token}` } : {}),
            ...(payload === undefined
              ? {}
              : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let json: unknown = text;
            try {
              json = JSON.parse(text);
            } catch {
              // not JSON: keep the text
            }
            resolve({ status: res.statusCode ?? 0, json });
          });
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  const ok = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await call(method, path, body);
    if (res.status !== 200)
      throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.json)}`);
    return res.json as T;
  };
  return { call, ok, close: () => agent.destroy() };
}

type JsonClient = ReturnType<typeof jsonClient>;

/** Pushes a tiny image to `<org>/app` (creating the repo) and returns the repo's uid and manifest digest. */
async function imageRepo(
  api: JsonClient,
  reg: Registry,
  orgName: string,
  orgUid: string,
): Promise<{ repo: string; digest: string }> {
  const repoPath = `${orgName}/app`;
  const { digest } = await pushSmallImage(reg, repoPath, 512);
  const repos = await api.ok<{ repos: { uid: string }[] }>(
    "GET",
    `/registry/v2/repos?uidp.descendants_of=${orgUid}&name=app`,
  );
  const repo = repos.repos[0]?.uid;
  if (!repo) throw new Error(`repo ${repoPath} not found after the push`);
  return { repo, digest };
}

async function statsOf(receiver: JsonClient, phase: string): Promise<PhaseStats> {
  const all = await receiver.ok<Record<string, PhaseStats>>("GET", "/stats");
  return all[phase] ?? { deliveries: 0, duplicates: 0, complete: 0, lastCompleteAt: 0 };
}

/** Waits until `complete` events of `phase` reached all their sinks; the stats then. */
async function drained(receiver: JsonClient, phase: string, complete: number): Promise<PhaseStats> {
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  for (;;) {
    const stats = await statsOf(receiver, phase);
    if (stats.complete >= complete) return stats;
    if (Date.now() > deadline) {
      throw new Error(
        `${phase}: only ${stats.complete} of ${complete} events delivered after ${DRAIN_TIMEOUT_MS} ms`,
      );
    }
    await sleep(20);
  }
}

/** The first failed create's answer (or error), for the log. */
let firstError = "";

/** One tag create named `<phase>-<n>`; resolves with the time the API answered 200, or 0. */
function createTag(api: JsonClient, repo: string, digest: string, name: string): Promise<number> {
  return api.call("POST", `/registry/v2/tags/${repo}`, { name, digest }).then(
    (res) => {
      if (res.status === 200) return Date.now();
      firstError ||= `${res.status} ${JSON.stringify(res.json).slice(0, 200)}`;
      return 0;
    },
    (err: unknown) => {
      firstError ||= String(err);
      return 0;
    },
  );
}

interface SteadyResult {
  start: number;
  end: number;
  ok: number;
  errors: number;
  /** Send slots skipped because MAX_IN_FLIGHT requests were pending. */
  skipped: number;
  /** n → when its create was answered. */
  answered: Map<number, number>;
  /** Receiver stats when production ended. */
  atEnd: PhaseStats;
  /** Wharf's CPU time from the start until every create was answered, and that time. */
  serverCpuSeconds: number;
  seconds: number;
}

/**
 * Produces RATE tag creates per second for `seconds`, open loop (sends are not paced by answers),
 * named `<phase>-<n>`.
 */
async function steady(
  api: JsonClient,
  receiver: JsonClient,
  wharfPid: number,
  target: { repo: string; digest: string },
  phase: string,
  seconds: number,
): Promise<SteadyResult> {
  const answered = new Map<number, number>();
  let sent = 0;
  let inFlight = 0;
  let errors = 0;
  let skipped = 0;
  const pending = new Set<Promise<void>>();
  const cpu = cpuSecondsOf(wharfPid);
  const start = Date.now();
  const end = start + seconds * 1000;
  const total = Math.round(RATE * seconds);
  while (sent < total) {
    const due = Math.min(total, Math.floor(((Date.now() - start) / 1000) * RATE) + 1);
    while (sent < due) {
      const n = sent++;
      if (inFlight >= MAX_IN_FLIGHT) {
        skipped++;
        continue;
      }
      inFlight++;
      const p: Promise<void> = createTag(api, target.repo, target.digest, `${phase}-${n}`).then((at) => {
        inFlight--;
        pending.delete(p);
        if (at > 0) answered.set(n, at);
        else errors++;
      });
      pending.add(p);
    }
    await sleep(1);
  }
  const wait = end - Date.now();
  if (wait > 0) await sleep(wait);
  const atEnd = await statsOf(receiver, phase);
  await Promise.all([...pending]);
  return {
    start,
    end,
    ok: answered.size,
    errors,
    skipped,
    answered,
    atEnd,
    serverCpuSeconds: cpuSecondsOf(wharfPid) - cpu,
    seconds: (Date.now() - start) / 1000,
  };
}

/** Creates `count` tags named `b-<n>` from CONCURRENCY clients as fast as they go. */
async function burst(api: JsonClient, repo: string, digest: string, count: number): Promise<number> {
  let next = 0;
  let errors = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const n = next++;
        if ((await createTag(api, repo, digest, `b-${n}`)) === 0) errors++;
      }
    }),
  );
  return errors;
}

async function writeLoad(
  wharf: WharfInfo,
  repo: string,
  digest: string,
  prefix: string,
  first: number,
  seconds = SECONDS,
): Promise<WriteLoad> {
  const { stdout } = await run(
    process.execPath,
    [
      "--import",
      "tsx",
      join(here, "events", "write-load.ts"),
      wharf.apiUrl,
      repo,
      digest,
      wharf.apiToken,
      String(CONCURRENCY),
      String(seconds),
      prefix,
      String(first),
    ],
    { cwd: root, maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout) as WriteLoad;
}

function spawnNode(script: string, args: string[], nodeFlags: string[] = []) {
  return spawnTracked(process.execPath, [...nodeFlags, "--import", "tsx", join(here, script), ...args], {
    cwd: root,
    stdio: ["pipe", "pipe", "inherit"],
  });
}

interface SteadyFigures {
  run: SteadyResult;
  /** Events/s answered by the API, and delivered to all sinks, from the second second on. */
  produced: number;
  delivered: number;
  backlogEvents: number;
  backlogDeliveries: number;
  drainSeconds: number;
  /** ms from each create's answer until its event reached all sinks, sorted. */
  lag: number[];
  /** Per second of production and of the drain after it: creates answered, events at all sinks. */
  perSecond: Array<{ answered: number; delivered: number }>;
}

/** How many of `times` fall in each whole second from `start`, for `seconds` seconds. */
function perSecondCounts(times: readonly number[], start: number, seconds: number): number[] {
  const counts = new Array<number>(seconds).fill(0);
  for (const t of times) {
    const s = Math.floor((t - start) / 1000);
    if (s >= 0 && s < seconds) counts[s] = (counts[s] ?? 0) + 1;
  }
  return counts;
}

async function measureSteady(
  wharf: WharfInfo,
  api: JsonClient,
  receiver: JsonClient,
  target: { repo: string; digest: string },
): Promise<SteadyFigures> {
  if (WARMUP_SECONDS > 0) {
    console.log(`steady: warming up at ${RATE} tag creates/s for ${WARMUP_SECONDS} s…`);
    const warm = await steady(api, receiver, wharf.pid, target, "u", WARMUP_SECONDS);
    await drained(receiver, "u", warm.ok);
  }
  console.log(`steady: ${RATE} tag creates/s for ${SECONDS} s to ${SINKS} sinks…`);
  const run = await steady(api, receiver, wharf.pid, target, "s", SECONDS);
  const done = await drained(receiver, "s", run.ok);
  const times = new Map(
    Object.entries(await receiver.ok<Record<string, number>>("GET", "/times?phase=s")).map(
      ([n, t]) => [Number(n), t] as const,
    ),
  );
  const windowStart = run.start + 1000;
  const windowSeconds = (run.end - windowStart) / 1000;
  const inWindow = (t: number) => t >= windowStart && t <= run.end;
  const answeredAt = [...run.answered.values()];
  const completedAt = [...times.values()];
  const producedByEnd = answeredAt.filter((t) => t <= run.end).length;
  const seconds = Math.ceil((Math.max(run.end, done.lastCompleteAt) - run.start) / 1000);
  const answeredPerSecond = perSecondCounts(answeredAt, run.start, seconds);
  const deliveredPerSecond = perSecondCounts(completedAt, run.start, seconds);
  const figures: SteadyFigures = {
    run,
    produced: answeredAt.filter(inWindow).length / windowSeconds,
    delivered: completedAt.filter(inWindow).length / windowSeconds,
    backlogEvents: producedByEnd - completedAt.filter((t) => t <= run.end).length,
    backlogDeliveries: producedByEnd * SINKS - run.atEnd.deliveries,
    drainSeconds: Math.max(0, done.lastCompleteAt - run.end) / 1000,
    lag: [...run.answered]
      .map(([n, at]) => (times.get(n) ?? Number.NaN) - at)
      .filter((l) => Number.isFinite(l))
      .sort((a, b) => a - b),
    perSecond: answeredPerSecond.map((answered, i) => ({
      answered,
      delivered: deliveredPerSecond[i] ?? 0,
    })),
  };
  console.log(
    `steady: ${run.ok} events created (${run.errors} errors${firstError ? `, first: ${firstError}` : ""}, ${run.skipped} skipped), ${done.complete} delivered to all sinks, drained ${fmt(figures.drainSeconds, 2)} s after production stopped`,
  );
  return figures;
}

interface BurstFigures {
  /** From the first create until the last delivery arrived. */
  seconds: number;
  produceSeconds: number;
  deliveries: number;
  events: number;
  /** Events still undelivered when the creates ended, and how long they took. */
  afterProduction: number;
  drainSeconds: number;
  errors: number;
  cpuSeconds: number;
  /** Wharf's CPU time after the creates ended (delivery alone). */
  drainCpuSeconds: number;
}

async function measureBurst(
  wharf: WharfInfo,
  api: JsonClient,
  receiver: JsonClient,
  target: { repo: string; digest: string },
): Promise<BurstFigures> {
  console.log(`burst: ${BURST} tag creates from ${CONCURRENCY} clients…`);
  const cpu = cpuSecondsOf(wharf.pid);
  const start = Date.now();
  const errors = await burst(api, target.repo, target.digest, BURST);
  const produced = Date.now();
  const cpuAtProduced = cpuSecondsOf(wharf.pid);
  const atProduced = await statsOf(receiver, "b");
  const done = await drained(receiver, "b", BURST - errors);
  const cpuDone = cpuSecondsOf(wharf.pid);
  const figures: BurstFigures = {
    seconds: (done.lastCompleteAt - start) / 1000,
    produceSeconds: (produced - start) / 1000,
    deliveries: done.deliveries,
    events: done.complete,
    afterProduction: done.complete - atProduced.complete,
    drainSeconds: Math.max(0, done.lastCompleteAt - produced) / 1000,
    errors,
    cpuSeconds: cpuDone - cpu,
    drainCpuSeconds: cpuDone - cpuAtProduced,
  };
  console.log(
    `burst: created in ${fmt(figures.produceSeconds, 2)} s (${errors} errors${firstError ? `, first: ${firstError}` : ""}), all ${done.deliveries} deliveries in ${fmt(figures.seconds, 2)} s`,
  );
  return figures;
}

interface OverheadFigures {
  without: WriteRun[];
  with: WriteRun[];
}

async function measureOverhead(
  wharf: WharfInfo,
  receiver: JsonClient,
  plain: { repo: string; digest: string },
  subscribed: { repo: string; digest: string },
): Promise<OverheadFigures> {
  const figures: OverheadFigures = { without: [], with: [] };
  // Unmeasured warm-up of both paths (JIT, SQLite page cache): otherwise the first run, always a
  // run without subscriptions, is the slowest of all and flatters the ratio.
  await writeLoad(wharf, plain.repo, plain.digest, "p", 90_000_000, 2);
  let createdWith = (await writeLoad(wharf, subscribed.repo, subscribed.digest, "w", 90_000_000, 2)).created;
  await drained(receiver, "w", createdWith);
  for (let r = 0; r < RUNS; r++) {
    for (const withSubscription of [false, true]) {
      const prefix = withSubscription ? "w" : "p";
      const cpu = cpuSecondsOf(wharf.pid);
      const target = withSubscription ? subscribed : plain;
      const result = await writeLoad(wharf, target.repo, target.digest, prefix, r * 10_000_000);
      const serverCpuUs = ((cpuSecondsOf(wharf.pid) - cpu) * 1e6) / Math.max(1, result.allRequests);
      let backlog = 0;
      let drainSeconds = 0;
      if (withSubscription) {
        // Drained before the next run, so no run pays for an earlier one's deliveries.
        const stoppedAt = Date.now();
        createdWith += result.created;
        backlog = createdWith - (await statsOf(receiver, "w")).complete;
        const done = await drained(receiver, "w", createdWith);
        drainSeconds = Math.max(0, done.lastCompleteAt - stoppedAt) / 1000;
      }
      const cpuWithDeliveryUs = ((cpuSecondsOf(wharf.pid) - cpu) * 1e6) / Math.max(1, result.allRequests);
      (withSubscription ? figures.with : figures.without).push({
        ...result,
        serverCpuUs,
        backlog,
        drainSeconds,
        cpuWithDeliveryUs,
      });
      console.log(
        `run ${r + 1}: ${withSubscription ? "with" : "without"} subscription ${fmt(result.rps, 0)} req/s, mean ${fmt(result.meanLatencyMs, 1)} ms, Wharf CPU/req ${fmt(serverCpuUs, 0)} µs (errors ${result.errors}${result.firstError ? `: ${result.firstError.slice(0, 200)}` : ""})${withSubscription ? `; backlog ${backlog} events, drained in ${fmt(drainSeconds, 2)} s` : ""}`,
      );
    }
  }
  return figures;
}

async function main(): Promise<void> {
  if (
    !(
      SECONDS > 1 &&
      RATE > 0 &&
      SINKS >= 1 &&
      BURST >= 1 &&
      CONCURRENCY >= 1 &&
      RUNS >= 1 &&
      WARMUP_SECONDS >= 0
    )
  ) {
    throw new Error(
      "BENCH_SECONDS (> 1), BENCH_EVENT_RATE, BENCH_SINKS, BENCH_BURST, BENCH_CONCURRENCY and BENCH_RUNS must be positive, BENCH_WARMUP_SECONDS not negative",
    );
  }
  const work = await mkdtemp(join(tmpdir(), "wharf-bench-events-"));
  onExit(() => rmSync(work, { recursive: true, force: true }));
  const wharfFlags = [
    "--initial-old-space-size=128",
    ...(process.env.BENCH_WHARF_NODE_FLAGS ?? "").split(" "),
  ].filter((f) => f !== "");
  const wharfChild = spawnNode(
    "registry/wharf-process.ts",
    [join(work, "data"), join(work, "wharf.log")],
    wharfFlags,
  );
  const receiverChild = spawnNode("events/receiver.ts", []);
  const clients: JsonClient[] = [];
  try {
    const wharf = await firstJsonLine<WharfInfo>(wharfChild, "wharf");
    const sink = await firstJsonLine<{ pid: number; url: string }>(receiverChild, "receiver");
    const api = jsonClient(wharf.apiUrl, wharf.apiToken, API_SOCKETS);
    const receiver = jsonClient(sink.url, undefined, 4);
    clients.push(api, receiver);
    const reg = registry("wharf", wharf.registryUrl, { authorization: `Bearer ${wharf.registryToken}` });
    const org = async (name: string) =>
      (await api.ok<{ uid: string }>("POST", "/iam/v2/groups", { name })).uid;
    const orgs = { delivery: "bench-delivery", plain: "bench-plain", subscribed: "bench-subscribed" };
    const uids = {
      delivery: await org(orgs.delivery),
      plain: await org(orgs.plain),
      subscribed: await org(orgs.subscribed),
    };
    const repos = {
      delivery: await imageRepo(api, reg, orgs.delivery, uids.delivery),
      plain: await imageRepo(api, reg, orgs.plain, uids.plain),
      subscribed: await imageRepo(api, reg, orgs.subscribed, uids.subscribed),
    };
    for (let i = 0; i < SINKS; i++) {
      await api.ok("POST", `/events/v2/subscriptions/${uids.delivery}`, {
        sink: `${sink.url}/hook/${SINKS}/${i}`,
      });
    }
    await api.ok("POST", `/events/v2/subscriptions/${uids.subscribed}`, { sink: `${sink.url}/hook/1/0` });
    await sleep(1000); // the subscription.created events go out first
    console.log(
      `wharf ${wharf.apiUrl} (pid ${wharf.pid}), receiver ${sink.url} (pid ${sink.pid}); phases ${[...PHASES].join(", ")}`,
    );
    const steadyFigures = PHASES.has("steady")
      ? await measureSteady(wharf, api, receiver, repos.delivery)
      : undefined;
    const burstFigures = PHASES.has("burst")
      ? await measureBurst(wharf, api, receiver, repos.delivery)
      : undefined;
    const overhead = PHASES.has("overhead")
      ? await measureOverhead(wharf, receiver, repos.plain, repos.subscribed)
      : undefined;
    const stats = await receiver.ok<Record<string, PhaseStats>>("GET", "/stats");
    const duplicates = Object.values(stats).reduce((sum, p) => sum + p.duplicates, 0);
    report({ steady: steadyFigures, burst: burstFigures, overhead, duplicates });
  } finally {
    for (const c of clients) c.close();
    await stop(receiverChild);
    await stop(wharfChild);
    await rm(work, { recursive: true, force: true });
  }
}

function report(r: {
  steady: SteadyFigures | undefined;
  burst: BurstFigures | undefined;
  overhead: OverheadFigures | undefined;
  duplicates: number;
}): void {
  const lines: string[] = [];
  const out = (line = "") => lines.push(line);
  const targets: Array<[ok: boolean, label: string, value: string]> = [];
  out();
  out(
    `=== Events benchmark: SQLite, default dispatcher options, ${SINKS} sinks at ${RATE} events/s for ${SECONDS} s, burst of ${BURST}, ${CONCURRENCY} clients, ${RUNS} write runs ===`,
  );
  const st = r.steady;
  if (st) {
    const sr = st.run;
    out();
    out(`Delivery at a steady ${RATE} events/s (tag creates through the API, open loop):`);
    out(
      `  created (API answered)           ${fmt(st.produced, 0).padStart(7)} events/s   (${sr.ok} in all, ${sr.errors} errors, ${sr.skipped} sends skipped at ${MAX_IN_FLIGHT} in flight)`,
    );
    out(
      `  delivered to all ${String(SINKS).padEnd(2)} sinks         ${fmt(st.delivered, 0).padStart(7)} events/s = ${fmt(st.delivered * SINKS, 0)} deliveries/s   (both from second 2 to the end of production)`,
    );
    out(
      `  backlog when production stopped  ${String(st.backlogEvents).padStart(7)} events (${st.backlogDeliveries} deliveries)`,
    );
    out(`  drained after production stopped ${fmt(st.drainSeconds, 2).padStart(6)} s`);
    out(
      `  create answered → at all sinks   p50 ${fmt(quantile(st.lag, 0.5), 0)} ms, p99 ${fmt(quantile(st.lag, 0.99), 0)} ms, max ${fmt(st.lag.at(-1) ?? Number.NaN, 0)} ms`,
    );
    out(
      `  per second: created / delivered  ${st.perSecond.map((p) => `${p.answered}/${p.delivered}`).join(" ")}`,
    );
    out(
      `  Wharf CPU                        ${fmt((sr.serverCpuSeconds / sr.seconds) * 100, 0).padStart(7)} % of one core (until the last create was answered)`,
    );
    targets.push(
      [
        st.produced >= RATE * RATE_TOLERANCE && sr.errors === 0 && sr.skipped === 0,
        `the API answers ${RATE} tag creates/s (≥ ${fmt(RATE * RATE_TOLERANCE, 0)}/s, no errors)`,
        `${fmt(st.produced, 0)}/s`,
      ],
      [
        st.delivered >= RATE * RATE_TOLERANCE,
        `delivered events/s while producing ≥ ${RATE} (within ${fmt((1 - RATE_TOLERANCE) * 100, 0)}%)`,
        `${fmt(st.delivered, 0)}/s`,
      ],
      [
        st.drainSeconds <= DRAIN_TARGET_S,
        `the backlog drains within ${DRAIN_TARGET_S} s of production stopping`,
        `${st.backlogEvents} events, ${fmt(st.drainSeconds, 2)} s`,
      ],
    );
  }
  const b = r.burst;
  if (b) {
    out();
    out(`Burst of ${BURST} events (${CONCURRENCY} clients as fast as they go), max delivery throughput:`);
    out(
      `  created in                       ${fmt(b.produceSeconds, 2).padStart(7)} s = ${fmt(BURST / b.produceSeconds, 0)} events/s (${b.errors} errors)`,
    );
    out(
      `  all ${String(b.deliveries).padEnd(6)} deliveries in       ${fmt(b.seconds, 2).padStart(7)} s = ${fmt(b.deliveries / b.seconds, 0)} deliveries/s = ${fmt(b.events / b.seconds, 0)} events/s to all sinks`,
    );
    out(
      `  after the creates ended          ${fmt(b.drainSeconds, 2).padStart(7)} s for the last ${b.afterProduction} events = ${fmt((b.afterProduction * SINKS) / Math.max(b.drainSeconds, 1e-3), 0)} deliveries/s (delivery alone), Wharf CPU ${fmt((b.drainCpuSeconds * 1e6) / Math.max(1, b.afterProduction * SINKS), 0)} µs per delivery`,
    );
    out(
      `  Wharf CPU                        ${fmt(b.cpuSeconds, 2).padStart(7)} s = ${fmt((b.cpuSeconds * 1e6) / Math.max(1, b.deliveries), 0)} µs per delivery (creates included)`,
    );
  }
  const o = r.overhead;
  if (o) {
    out();
    out(
      `Tag creates, ${CONCURRENCY} closed-loop clients, ${SECONDS} s per run: best run (median of ${RUNS})`,
    );
    const best = (runs: WriteRun[]) => runs.reduce((a, x) => (x.rps > a.rps ? x : a));
    const without = best(o.without);
    const withSub = best(o.with);
    const row = (label: string, runs: WriteRun[], top: WriteRun) =>
      out(
        `  ${label.padEnd(24)} ${fmt(top.rps, 0).padStart(6)} (${fmt(median(runs.map((x) => x.rps)), 0)}) req/s   mean latency ${fmt(top.meanLatencyMs, 1)} (${fmt(median(runs.map((x) => x.meanLatencyMs)), 1)}) ms   p99 ${fmt(top.p99LatencyMs, 1)} ms   Wharf CPU/req ${fmt(median(runs.map((x) => x.serverCpuUs)), 0)} µs   errors ${runs.reduce((sum, x) => sum + x.errors, 0)}`,
      );
    row("without subscriptions", o.without, without);
    row("with one subscription", o.with, withSub);
    out(
      `  with: events undelivered when each run ended ${o.with.map((x) => x.backlog).join(", ")} (of ${o.with.map((x) => x.created).join(", ")}); drained in ${o.with.map((x) => fmt(x.drainSeconds, 2)).join(", ")} s`,
    );
    out(
      `  Wharf CPU per create with its delivery (load + drain): without ${fmt(median(o.without.map((x) => x.cpuWithDeliveryUs)), 0)} µs, with ${fmt(median(o.with.map((x) => x.cpuWithDeliveryUs)), 0)} µs (medians)`,
    );
    const ratio = withSub.rps / without.rps;
    const medianRatio = median(o.with.map((x) => x.rps)) / median(o.without.map((x) => x.rps));
    out(
      `  with / without           ${fmt(ratio, 3).padStart(6)}× req/s (medians ${fmt(medianRatio, 3)}×); mean latency ${fmt(withSub.meanLatencyMs / without.meanLatencyMs, 3)}×`,
    );
    targets.push([
      ratio >= OVERHEAD_TARGET && o.without.concat(o.with).every((x) => x.errors === 0),
      `tag creates with / without a subscription ≥ ${OVERHEAD_TARGET}× (outbox ≤ 15%)`,
      `${fmt(ratio, 3)}×`,
    ]);
  }
  out();
  out(`Re-sent deliveries the receiver saw (at-least-once duplicates): ${r.duplicates}`);
  out();
  out("Targets:");
  let failed = 0;
  for (const [ok, label, value] of targets) {
    if (!ok) failed++;
    out(`  ${(ok ? "PASS" : "FAIL").padEnd(4)}  ${label.padEnd(66)} ${value}`);
  }
  if (b)
    out(
      `  info  ${"max delivery throughput (burst)".padEnd(66)} ${fmt(b.deliveries / b.seconds, 0)} deliveries/s`,
    );
  if (st && b && o) {
    // What one event loop would need for the steady target, from this run's costs.
    const createUs = median(o.without.map((x) => x.serverCpuUs));
    const deliveryUs = (b.drainCpuSeconds * 1e6) / Math.max(1, b.afterProduction * SINKS);
    const need = (createUs * RATE + deliveryUs * RATE * SINKS) / 1e6;
    out(
      `  info  ${`CPU the steady target needs: ${RATE} × ${fmt(createUs, 0)} µs + ${RATE * SINKS} × ${fmt(deliveryUs, 0)} µs`.padEnd(66)} ${fmt(need * 100, 0)}% of one core`,
    );
  }
  out();
  out(
    targets.length === 0
      ? "no targets measured"
      : failed === 0
        ? "all targets met"
        : `${failed} target(s) missed`,
  );
  console.log(lines.join("\n"));
}

await main();
