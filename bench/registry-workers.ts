// The workers dimension of `bench:registry`: `BENCH_WORKERS=1,2 npm run bench:registry` (or `auto`:
// 1 and this machine's cores). The real `wharf serve --workers N` on a throwaway PostgreSQL cluster
// (SQLite refuses more than one worker) with the default filesystem blob store. For each count,
// BENCH_RUNS times (2), interleaved:
// - push: one monolithic push of a BENCH_BLOB_MIB (1024) blob, then BENCH_PUSH_STREAMS (2) pushes
//   of different blobs at once (one upload is one request, so only parallel pushes can use more
//   workers); MB/s and server CPU s/GiB; the bytes are removed after each push so every push writes;
// - manifest GET under wrk (2 threads, 32 connections, BENCH_SECONDS (10) after a 2 s warm-up),
//   beside N bare node:cluster workers answering the same manifest bytes under the same load.
// CPU is summed over the primary and every worker. Prints median (min–max) of the runs; a report,
// not a test (exits 0 unless something errored).
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { findPostgresBin, throwawayPostgres } from "../test/support/postgres-cluster.js";
import { removeBlobBytes } from "./registry/blob-bytes.js";
import { expect, OCI_MANIFEST, pushMonolithic, pushSmallImage, registry } from "./registry/client.js";
import { sha256File, sync, writeRandomFile } from "./registry/machine.js";
import { ByWorkers, scaling, workerCounts, workersTable } from "./workers/figures.js";
import { bareClusterLoad, WRK, wrkWithCpu } from "./workers/measure.js";
import { startWharfWorkers, type WharfWorkers } from "./workers/wharf-workers.js";

const MiB = 1024 * 1024;
const BLOB_MIB = Number(process.env.BENCH_BLOB_MIB ?? 1024);
const STREAMS = Number(process.env.BENCH_PUSH_STREAMS ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);
const size = BLOB_MIB * MiB;

interface Blob {
  path: string;
  digest: string;
}

/** Pushes `blobs` at once to fresh repos; MB/s over all of them and server CPU s/GiB. */
async function pushAtOnce(wharf: WharfWorkers, dataDir: string, blobs: Blob[], repo: string) {
  const reg = registry("wharf", wharf.registryUrl, { authorization: `Bearer ${wharf.registryToken}` });
  await sync();
  const cpu = wharf.cpuSeconds();
  const started = performance.now();
  await Promise.all(blobs.map((b, i) => pushMonolithic(reg, `bench/${repo}-${i}`, b.path, size, b.digest)));
  const seconds = (performance.now() - started) / 1000;
  const cpuPerGiB = (wharf.cpuSeconds() - cpu) / ((blobs.length * size) / (1024 * MiB));
  for (const b of blobs) {
    if ((await removeBlobBytes(dataDir, b.digest.slice("sha256:".length))) === 0) {
      throw new Error(`the pushed blob ${b.digest} is not on disk under ${dataDir}`);
    }
  }
  return { mbps: (blobs.length * size) / 1e6 / seconds, cpuPerGiB };
}

/** Runs the workers dimension and prints its report. */
export async function runRegistryWorkers(value: string): Promise<void> {
  const counts = workerCounts(value, availableParallelism());
  if (!(BLOB_MIB > 0 && STREAMS >= 1 && SECONDS > 0 && RUNS >= 1)) {
    throw new Error(
      "BENCH_BLOB_MIB, BENCH_PUSH_STREAMS, BENCH_SECONDS and BENCH_RUNS must be positive numbers",
    );
  }
  const bin = findPostgresBin();
  if (!bin)
    throw new Error(
      "the workers dimension needs the PostgreSQL server binaries (apt-get install postgresql)",
    );
  const databaseUrl = (await throwawayPostgres(bin)).urlOf("wharf_bench_registry_workers");
  const work = await mkdtemp(join(tmpdir(), "wharf-bench-registry-workers-"));
  try {
    const dataDir = join(work, "wharf");
    await mkdir(dataDir);
    console.log(`writing ${STREAMS} random ${BLOB_MIB} MiB blob files…`);
    const blobs: Blob[] = [];
    for (let i = 0; i < STREAMS; i++) {
      const path = join(work, `blob-${i}.bin`);
      await writeRandomFile(path, size);
      blobs.push({ path, digest: (await sha256File(path)).digest });
    }
    const figures = new ByWorkers();
    let manifest: Buffer | undefined;
    for (let run = 1; run <= RUNS; run++) {
      for (const workers of counts) {
        const wharf = await startWharfWorkers({
          workers,
          dataDir,
          databaseUrl,
          logFile: join(work, "requests.log"),
        });
        try {
          const auth = { authorization: `Bearer ${wharf.registryToken}` };
          const reg = registry("wharf", wharf.registryUrl, auth);
          if (manifest === undefined) {
            const org = await fetch(`${wharf.apiUrl}/iam/v2/groups`, {
              method: "POST",
              headers: { authorization: `Bearer ${wharf.apiToken}`, "content-type": "application/json" },
              body: JSON.stringify({ name: "bench" }),
            });
            if (org.status !== 200)
              throw new Error(`creating organization bench: ${org.status} ${await org.text()}`);
            manifest = (await pushSmallImage(reg, "bench/app", 1024)).manifest;
          }
          const got = await expect(reg, 200, "GET", "/v2/bench/app/manifests/latest", {
            accept: OCI_MANIFEST,
          });
          if (!got.body.equals(manifest)) throw new Error("manifest GET returned other bytes");

          const one = await pushAtOnce(wharf, dataDir, blobs.slice(0, 1), `one-${run}-${workers}`);
          figures.add("push 1", workers, one.mbps);
          figures.add("push 1 cpu", workers, one.cpuPerGiB);
          const many = await pushAtOnce(wharf, dataDir, blobs, `many-${run}-${workers}`);
          figures.add("push n", workers, many.mbps);
          figures.add("push n cpu", workers, many.cpuPerGiB);

          const url = `${wharf.registryUrl}/v2/bench/app/manifests/latest`;
          const load = await wrkWithCpu(url, { ...auth, accept: OCI_MANIFEST }, SECONDS, wharf.cpuSeconds);
          if (load.errors > 0) throw new Error(`manifest GET at ${workers} workers: ${load.errors} errors`);
          figures.addLoad("GET", workers, load);
        } finally {
          await wharf.stop();
        }
        const base = await bareClusterLoad(workers, SECONDS, manifest?.toString());
        figures.addLoad("bare", workers, base);
        console.log(
          `run ${run}, ${workers} worker(s): push ${figures.all("push 1", workers).at(-1)?.toFixed(0)} MB/s, ${STREAMS} at once ${figures.all("push n", workers).at(-1)?.toFixed(0)} MB/s; manifest GET ${figures.all("GET", workers).at(-1)?.toFixed(0)} req/s (bare ${base.rps.toFixed(0)})`,
        );
      }
    }
    report(counts, figures);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function report(counts: number[], f: ByWorkers): void {
  const lines = [
    "",
    `=== bench:registry workers: ${BLOB_MIB} MiB blobs on the filesystem, metadata in PostgreSQL, wrk -t${WRK.threads} -c${WRK.connections} -d${SECONDS}s, ${RUNS} runs: median (min–max) ===`,
    "MB = 10^6 bytes. CPU: user + system of the primary and every worker (PostgreSQL's own not included).",
    "bare: node:cluster workers answering the manifest's bytes, as many as Wharf's, under the same wrk load.",
    "",
    ...workersTable(counts, f, [
      ["push MB/s", "push 1", 0],
      ["push CPU s/GiB", "push 1 cpu", 2],
      [`${STREAMS} pushes MB/s`, "push n", 0],
      [`${STREAMS} pushes s/GiB`, "push n cpu", 2],
      ["manifest GET req/s", "GET", 0],
      ["GET CPU µs/req", "GET cpu", 0],
      ["machine busy % (GET)", "GET busy", 0],
      ["bare req/s", "bare", 0],
      ["bare CPU µs/req", "bare cpu", 0],
    ]),
    "",
    scaling(counts, f, [
      ["push", "push 1"],
      [`${STREAMS} pushes at once`, "push n"],
      ["manifest GET", "GET"],
      ["bare node:cluster", "bare"],
    ]),
  ];
  console.log(lines.join("\n"));
}
