// Mirror and replication benchmark (`npm run bench:mirror`), each figure beside its baseline
// measured in the same run on the same machine:
// - a cold pull through the pull-through cache against a direct pull from the upstream;
// - a warm pull through the cache against a pull of content pushed into Wharf;
// - replication throughput (a MANUAL PUSH rule's run, MB/s) against `skopeo copy` of an image of
//   the same size from Wharf to the same remote.
// The upstream and the replication remote are CNCF distribution (Debian's docker-registry 2.8) on
// loopback, one each; Wharf runs in its own process (bench/registry/wharf-process.ts). Pulls are
// `skopeo copy docker://… dir:…` (the real client, layers in parallel, written to disk on both
// sides alike). Every image is fresh random content of the same size, so no figure benefits from
// another's blobs. Prints each figure per run, the median and spread, Wharf's CPU seconds per run
// and the ratios; exits 0 unless something errored (it is a report, not a test).
//
// Environment: BENCH_LAYERS (4), BENCH_LAYER_MIB (16), BENCH_RUNS (2), BENCH_WHARF_NODE_FLAGS.
import type { ChildProcess } from "node:child_process";
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { expect, OCI_MANIFEST, pushSmallBlob, type Registry, registry } from "./registry/client.js";
import { startDistribution } from "./registry/distribution.js";
import { cpuSecondsOf, firstJsonLine, spawnTracked, stop } from "./registry/processes.js";
import type { WharfInfo } from "./registry/wharf-process.js";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const run = promisify(execFile);

const LAYERS = Number(process.env.BENCH_LAYERS ?? 4);
const LAYER_BYTES = Number(process.env.BENCH_LAYER_MIB ?? 16) * 1024 * 1024;
const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const IMAGE_BYTES = LAYERS * LAYER_BYTES;

const sha256Of = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** Pushes an image of LAYERS random layers to `repo:1`. */
async function pushRandomImage(reg: Registry, repo: string): Promise<void> {
  const layers = Array.from({ length: LAYERS }, () => randomBytes(LAYER_BYTES));
  const config = Buffer.from(
    JSON.stringify({
      architecture: "amd64",
      os: "linux",
      rootfs: { type: "layers", diff_ids: layers.map(sha256Of) },
      config: {},
    }),
  );
  await pushSmallBlob(reg, repo, config, sha256Of(config));
  for (const layer of layers) await pushSmallBlob(reg, repo, layer, sha256Of(layer));
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: sha256Of(config),
        size: config.length,
      },
      layers: layers.map((layer) => ({
        mediaType: "application/vnd.oci.image.layer.v1.tar",
        digest: sha256Of(layer),
        size: layer.length,
      })),
    }),
  );
  await expect(reg, 201, "PUT", `/v2/${repo}/manifests/1`, { "content-type": OCI_MANIFEST }, manifest);
}

interface Timed {
  seconds: number;
  /** CPU seconds Wharf's process used meanwhile. */
  wharfCpu: number;
}

async function timed(wharfPid: number, op: () => Promise<void>): Promise<Timed> {
  const cpu = cpuSecondsOf(wharfPid);
  const started = performance.now();
  await op();
  return { seconds: (performance.now() - started) / 1000, wharfCpu: cpuSecondsOf(wharfPid) - cpu };
}

const hostOf = (url: string) => new URL(url).host;

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), "wharf-bench-mirror-"));
  const children: ChildProcess[] = [];
  try {
    await mkdir(join(work, "upstream"));
    await mkdir(join(work, "remote"));
    const upstream = await startDistribution(join(work, "upstream"));
    children.push(upstream.child);
    const remote = await startDistribution(join(work, "remote"));
    children.push(remote.child);
    await mkdir(join(work, "wharf"));
    const wharfChild = spawnTracked(
      process.execPath,
      [
        "--import",
        "tsx",
        join(here, "registry", "wharf-process.ts"),
        join(work, "wharf"),
        join(work, "wharf.log"),
      ],
      { cwd: root, stdio: ["pipe", "pipe", "inherit"] },
    );
    children.push(wharfChild);
    const wharf = await firstJsonLine<WharfInfo>(wharfChild, "wharf");
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${wharf.apiUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${wharf.apiToken}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const org = String((await api("POST", "/iam/v2/groups", { name: "bench" })).uid);
    await api("POST", `/registry/v2/upstreams/${org}`, { name: "up", url: upstream.url, tagTtl: "1h" });

    const up = registry("upstream", upstream.url);
    const wharfReg = registry("wharf", wharf.registryUrl, { authorization: `Bearer ${wharf.registryToken}` });
    const wharfHost = hostOf(wharf.registryUrl);
    const token = ["--src-registry-token", wharf.registryToken];
    const pull = async (from: string, src: string[]) => {
      const dir = await mkdtemp(join(work, "pull-"));
      await run("skopeo", ["copy", "-q", "--src-tls-verify=false", ...src, `docker://${from}`, `dir:${dir}`]);
      await rm(dir, { recursive: true, force: true });
    };

    console.log(
      `bench:mirror: ${RUNS} runs, images of ${LAYERS} × ${LAYER_BYTES / 2 ** 20} MiB random layers`,
    );
    const figures: Record<string, Timed[]> = {
      direct: [],
      cold: [],
      warm: [],
      pushed: [],
      replication: [],
      skopeoCopy: [],
    };
    for (let r = 0; r < RUNS; r++) {
      await pushRandomImage(up, `bench/direct-${r}`);
      await pushRandomImage(up, `bench/cold-${r}`);
      for (const name of [`pushed-${r}`, `rep-${r}`, `copy-${r}`])
        await pushRandomImage(wharfReg, `bench/own/${name}`);

      figures.direct?.push(
        await timed(wharf.pid, () => pull(`${hostOf(upstream.url)}/bench/direct-${r}:1`, [])),
      );
      figures.cold?.push(
        await timed(wharf.pid, () => pull(`${wharfHost}/bench/up/bench/cold-${r}:1`, token)),
      );
      figures.warm?.push(
        await timed(wharf.pid, () => pull(`${wharfHost}/bench/up/bench/cold-${r}:1`, token)),
      );
      figures.pushed?.push(await timed(wharf.pid, () => pull(`${wharfHost}/bench/own/pushed-${r}:1`, token)));

      const rule = await api("POST", `/registry/v2/replicationRules/${org}`, {
        name: `rep-${r}`,
        direction: "PUSH",
        trigger: "MANUAL",
        enabled: true,
        remote: { url: remote.url },
        repoPattern: `own/rep-${r}`,
        tagPattern: "*",
        destination: "replica",
      });
      figures.replication?.push(
        await timed(wharf.pid, async () => {
          let state = await api("POST", `/registry/v2/replicationRules/${String(rule.uid)}:run`, {});
          while (state.state !== "SUCCEEDED" && state.state !== "FAILED") {
            await new Promise((resolve) => setTimeout(resolve, 50));
            state = await api("GET", `/registry/v2/replicationRuns/${String(state.uid)}`);
          }
          if (state.state === "FAILED")
            throw new Error(`replication run failed: ${JSON.stringify(state.errors)}`);
        }),
      );
      figures.skopeoCopy?.push(
        await timed(wharf.pid, () =>
          run("skopeo", [
            ...["copy", "-q", "--src-tls-verify=false", "--dest-tls-verify=false", ...token],
            `docker://${wharfHost}/bench/own/copy-${r}:1`,
            `docker://${hostOf(remote.url)}/skopeo/copy-${r}:1`,
          ]).then(() => undefined),
        ),
      );
    }

    const mb = IMAGE_BYTES / 1e6;
    const median = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      const mid = Math.floor(s.length / 2);
      return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
    };
    const line = (name: string, xs: Timed[]) =>
      console.log(
        `${name.padEnd(12)} ${xs.map((x) => `${x.seconds.toFixed(2)} s (${(mb / x.seconds).toFixed(0)} MB/s, wharf cpu ${x.wharfCpu.toFixed(2)} s)`).join("  ")}`,
      );
    for (const [name, xs] of Object.entries(figures)) line(name, xs);
    const ratio = (what: string, a: string, b: string) => {
      const num = median((figures[a] ?? []).map((x) => x.seconds));
      const den = median((figures[b] ?? []).map((x) => x.seconds));
      const each = (figures[a] ?? []).map((x, i) => (x.seconds / (figures[b]?.[i]?.seconds ?? 1)).toFixed(2));
      console.log(
        `${what}: ${(num / den).toFixed(2)}× the time of ${b} (median; per run ${each.join(", ")})`,
      );
    };
    ratio("cold pull through the cache", "cold", "direct");
    ratio("warm pull through the cache", "warm", "pushed");
    ratio("replication run", "replication", "skopeoCopy");
  } finally {
    for (const child of children.reverse()) await stop(child);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
