// `npm run soak -- --minutes N`: HAProxy in front of three Wharf replicas on one PostgreSQL database
// and one S3 store (s3rver), under a mixed load (pushes with skopeo and over HTTP, monolithic and
// chunked; pulls by tag and digest; tag history; API writes and lists; webhooks to a local
// receiver), while one replica is killed with SIGKILL and restarted every --kill-every seconds. At the
// end it checks that every acknowledged push pulls with verified bytes and has its tag and history,
// that every acknowledged change was delivered, that client-visible errors happened only on a killed
// replica's in-flight requests, and that each replica's memory stayed under --max-rss-mib. Prints a
// report (operations per second by kind, errors by cause, p50/p99 latency, recovery after each kill;
// --report FILE also writes it as Markdown) and exits 1 when a check fails.
import { spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { writeImageLayout } from "../support/oci-layout.js";
import { findPostgresBin, throwawayPostgres } from "../support/postgres-cluster.js";
import { skopeoAvailable } from "../support/skopeo.js";
import { startWebhookReceiver } from "../support/webhook-receiver.js";
import { adminTokenOf, freeLoopbackPort } from "../support/wharf-process.js";
import { HAPROXY_MISSING, haproxyBinary, startHaproxy } from "./haproxy.js";
import { startReplicaSet } from "./replica-set.js";
import { attributeFailures, type CheckResult, checkPushes, undelivered } from "./soak-checks.js";
import { soakClient } from "./soak-client.js";
import { pickKind, runOp, type SoakWorld } from "./soak-load.js";
import { renderReport } from "./soak-report.js";

const { values: args } = parseArgs({
  options: {
    minutes: { type: "string", default: "2" },
    replicas: { type: "string", default: "3" },
    "kill-every": { type: "string", default: "20" },
    clients: { type: "string", default: "4" },
    "max-rss-mib": { type: "string", default: "768" },
    report: { type: "string" },
  },
});
const minutes = Number(args.minutes);
const replicaCount = Number(args.replicas);
const killEverySeconds = Number(args["kill-every"]);
const clientCount = Number(args.clients);
const maxRssMib = Number(args["max-rss-mib"]);
for (const [name, value] of Object.entries({
  minutes,
  replicaCount,
  killEverySeconds,
  clientCount,
  maxRssMib,
})) {
  if (!Number.isFinite(value) || value <= 0) fail(`--${name} must be a positive number`);
}

function fail(message: string): never {
  process.stderr.write(`soak: ${message}\n`);
  process.exit(2);
}
const log = (message: string) => process.stderr.write(`soak: ${message}\n`);

const haproxy = haproxyBinary();
if (haproxy === undefined) fail(HAPROXY_MISSING);
if (!skopeoAvailable())
  fail("skopeo is not installed: run `apt-get install -y skopeo` (CI's .ci/run installs it)");
const postgresBin = findPostgresBin();
if (postgresBin === undefined && !process.env.WHARF_TEST_DATABASE_URL) {
  fail("no PostgreSQL: install the server (apt-get install -y postgresql) or set WHARF_TEST_DATABASE_URL");
}

const work = await mkdtemp(join(tmpdir(), "wharf-soak-"));
const cleanups: (() => Promise<unknown>)[] = [() => rm(work, { recursive: true, force: true })];
let exitCode = 1;
try {
  exitCode = await soak();
} catch (err) {
  log(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
}
process.exit(exitCode);

async function soak(): Promise<number> {
  const databaseUrl = process.env.WHARF_TEST_DATABASE_URL
    ? process.env.WHARF_TEST_DATABASE_URL
    : (await throwawayPostgres(postgresBin as string)).urlOf("wharf_soak");
  const s3 = await startS3rverProcess();
  cleanups.push(s3.stop);
  const blobStore = new URL(`s3://${s3.options.bucket}/soak`);
  blobStore.searchParams.set("endpoint", s3.options.endpoint);
  blobStore.searchParams.set("region", s3.options.region);
  blobStore.searchParams.set("accessKeyId", s3.options.credentials.accessKeyId);
  blobStore.searchParams.set("secretAccessKey", s3.options.credentials.secretAccessKey);

  const front = { api: await freeLoopbackPort(), registry: await freeLoopbackPort() };
  const ports = [];
  for (let i = 0; i < replicaCount; i++)
    ports.push({ api: await freeLoopbackPort(), registry: await freeLoopbackPort() });
  const apiUrl = `http://127.0.0.1:${front.api}`;
  const registryUrl = `http://127.0.0.1:${front.registry}`;
  const env = {
    WHARF_DATABASE_URL: databaseUrl,
    WHARF_BLOB_STORE: blobStore.toString(),
    WHARF_PUBLIC_URL: apiUrl,
    WHARF_REGISTRY_URL: registryUrl,
    WHARF_EVENTS_ALLOW_HTTP: "true",
    WHARF_EVENTS_ALLOW_LOOPBACK: "true",
    // Garbage collection runs on every replica while the others take pushes.
    WHARF_GC_INTERVAL: "15s",
  };
  log(`starting ${replicaCount} replicas on PostgreSQL and s3rver`);
  const set = await startReplicaSet({ count: replicaCount, ports, env });
  cleanups.push(() => set.stop());
  const proxy = await startHaproxy(haproxy as string, work, [
    {
      name: "api",
      port: front.api,
      servers: set.replicas.map((r) => ({ name: r.name, port: r.apiPort })),
      h2: true,
    },
    {
      name: "registry",
      port: front.registry,
      servers: set.replicas.map((r) => ({ name: r.name, port: r.registryPort })),
    },
  ]);
  cleanups.push(() => proxy.stop());
  log(`HAProxy: API ${apiUrl}, registry ${registryUrl}`);

  const tokens = await tokenSource(set.replicas[0]?.dataDir ?? work, databaseUrl, apiUrl, registryUrl);
  cleanups.push(async () => tokens.stop());
  const api = soakClient(apiUrl, () => tokens.api);
  const registry = soakClient(registryUrl, () => tokens.registry);
  const grpcClient = new grpc.Client(`127.0.0.1:${front.api}`, grpc.credentials.createInsecure());
  cleanups.push(async () => grpcClient.close());
  const clientsOfOps = { api, registry, grpc: { client: grpcClient, token: () => tokens.api } };
  const receiver = await startWebhookReceiver();
  cleanups.push(() => receiver.close());

  const orgName = "soak";
  const org = await api.request("setup", "/iam/v2/groups", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ name: orgName }),
    expect: [200],
  });
  const orgUid = (JSON.parse(org.body.toString()) as { uid: string }).uid;
  await api.request("setup", `/events/v2/subscriptions/${orgUid}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ sink: receiver.url() }),
    expect: [200],
  });

  const world: SoakWorld = {
    org: { name: orgName, uid: orgUid },
    registryHost: `127.0.0.1:${front.registry}`,
    registryToken: () => tokens.registry,
    skopeoSources: await skopeoSources(work),
    pushes: [],
    changes: [],
    apiRepos: [],
    records: [],
  };

  const started = Date.now();
  const deadline = started + minutes * 60_000;
  log(`load for ${minutes} min with ${clientCount} clients; a replica is killed every ${killEverySeconds} s`);
  const clients = Array.from({ length: clientCount }, async () => {
    while (Date.now() < deadline) await runOp(pickKind(), world, clientsOfOps);
  });
  const memory = setInterval(() => set.sampleMemory(), 1000);
  const killer = (async () => {
    let next = 0;
    while (Date.now() + killEverySeconds * 1000 < deadline) {
      await new Promise((resolve) => setTimeout(resolve, killEverySeconds * 1000));
      const replica = set.replicas[next++ % set.replicas.length];
      if (!replica) break;
      const record = await set.killAndRestart(replica);
      log(`killed ${record.replica}; ready again after ${(record.readyAt ?? 0) - record.killedAt} ms`);
    }
  })();
  await Promise.all([...clients, killer]);
  const loadEnded = Date.now();
  clearInterval(memory);
  set.sampleMemory();

  log("checking: acknowledged pushes, deliveries, errors, memory");
  const checks: CheckResult[] = [await checkPushes(world.pushes, registry)];
  let missing = undelivered(world.pushes, world.changes, receiver.accepted());
  const deliveryDeadline = Date.now() + 120_000;
  while (missing.length > 0 && Date.now() < deliveryDeadline) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    missing = undelivered(world.pushes, world.changes, receiver.accepted());
  }
  const caughtUp =
    missing.length === 0
      ? `all delivered when checked, ${((Date.now() - loadEnded) / 1000).toFixed(1)} s after the load ended (the push checks ran first); `
      : "";
  checks.push({
    name: "deliveries",
    summary: `${world.pushes.length + world.changes.length} acknowledged changes; ${caughtUp}deliveries accepted by type: ${countBy(
      receiver.accepted().map((d) => String(d.headers["ce-type"])),
    )}`,
    violations: missing.map((m) => `not delivered: ${m}`),
  });
  if (process.env.SOAK_DUMP) {
    await writeFile(
      process.env.SOAK_DUMP,
      JSON.stringify({
        pushes: world.pushes.map((p) => ({ ...p, blobs: [...p.blobs] })),
        accepted: receiver.accepted(),
      }),
    );
  }
  const failures = attributeFailures(world.records, set.kills, proxy.readLog());
  checks.push({
    name: "client-visible errors",
    summary: `${world.records.filter((r) => !r.ok).length} failed operations of ${world.records.length}`,
    violations: failures.unexplained,
  });
  checks.push({
    name: "memory",
    summary: set.replicas
      .map((r) => `${r.name} peak ${Math.round(Math.max(...r.peakRssKib) / 1024)} MiB`)
      .join(", "),
    violations: set.replicas
      .filter((r) => Math.max(...r.peakRssKib) > maxRssMib * 1024)
      .map((r) => `${r.name} exceeded ${maxRssMib} MiB`),
  });

  const report = renderReport({
    minutes,
    replicas: replicaCount,
    clients: clientCount,
    seconds: (loadEnded - started) / 1000,
    records: world.records,
    kills: set.kills,
    byCause: failures.byCause,
    checks,
  });
  process.stdout.write(report);
  if (args.report) await writeFile(args.report, report);
  return checks.every((c) => c.violations.length === 0) ? 0 : 1;
}

/** `a 3, b 1` for the values' counts. */
function countBy(values: string[]): string {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts].map(([v, n]) => `${v} ${n}`).join(", ");
}

/** API and registry tokens of the administrator (`wharf admin token`, 10 min), renewed every 5 min. */
async function tokenSource(dataDir: string, databaseUrl: string, apiUrl: string, registryUrl: string) {
  const mint = (audience: string) =>
    adminTokenOf(dataDir, apiUrl, { audience, env: { WHARF_DATABASE_URL: databaseUrl } });
  const tokens = {
    api: await mint(apiUrl),
    registry: await mint(registryUrl),
    stop: () => clearInterval(timer),
  };
  const timer = setInterval(() => {
    void (async () => {
      tokens.api = await mint(apiUrl);
      tokens.registry = await mint(registryUrl);
    })().catch((err) => log(`token renewal failed: ${String(err)}`));
  }, 5 * 60_000);
  return tokens;
}

/** Three small OCI layouts skopeo copies from (each push names a new tag). */
async function skopeoSources(work: string): Promise<SoakWorld["skopeoSources"]> {
  const sources: SoakWorld["skopeoSources"] = [];
  for (let i = 0; i < 3; i++) {
    const dir = join(work, `layout${i}`);
    const image = await writeImageLayout(dir, {
      tag: "v1",
      files: { "etc/soak": `soak image ${i} ${Date.now()}\n`, "bin/data": "x".repeat(50_000 * (i + 1)) },
      layers: 2,
    });
    const blobs = new Map<string, number>();
    const { layoutBlob } = await import("../support/oci-layout.js");
    for (const digest of [image.configDigest, ...image.layerDigests])
      blobs.set(digest, layoutBlob(dir, digest).length);
    sources.push({ ref: `oci:${dir}:v1`, digest: image.manifestDigest, blobs });
  }
  return sources;
}

interface S3Options {
  bucket: string;
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
}

/** s3rver in a child process (see s3rver-child.ts). */
async function startS3rverProcess(): Promise<{ options: S3Options; stop: () => Promise<void> }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", new URL("./s3rver-child.ts", import.meta.url).pathname],
    {
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  process.once("exit", () => child.kill("SIGKILL"));
  const options = await new Promise<S3Options>((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString();
      const line = out.split("\n")[0];
      if (out.includes("\n") && line) resolve(JSON.parse(line) as S3Options);
    });
    child.once("exit", (code) => reject(new Error(`s3rver exited ${code}`)));
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  return {
    options,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
