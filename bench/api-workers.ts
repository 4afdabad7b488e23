// The workers dimension of `bench:api`: `BENCH_WORKERS=1,2 npm run bench:api` (or `auto`: 1 and
// this machine's cores). The same 100,000 repos (BENCH_REPOS), now in a throwaway PostgreSQL
// cluster (SQLite refuses more than one worker), served by the real `wharf serve --workers N` in
// its own processes. For each count, BENCH_RUNS times (2), interleaved: REST GET repo by uid and a
// 50-item list page under wrk (2 threads, 32 connections: a C generator, so the load costs less CPU
// than Node's; BENCH_SECONDS each after a 2 s warm-up), beside N bare node:cluster workers
// answering a constant under the same load: what this machine gives N plain Node processes while
// wrk shares its cores. CPU per request is summed over the primary and every worker.
// Prints median (min–max) of the runs; a report, not a test (exits 0 unless something errored).
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../dist/config/config.js";
import { startServer } from "../dist/server.js";
import { ensurePostgresDatabase } from "../dist/storage/sql/ensure-postgres-database.js";
import { findPostgresBin, throwawayPostgres } from "../test/support/postgres-cluster.js";
import { seedRepos } from "./api-seed.js";
import { ByWorkers, scaling, workerCounts, workersTable } from "./workers/figures.js";
import { bareClusterLoad, WRK, wrkWithCpu } from "./workers/measure.js";
import { startWharfWorkers } from "./workers/wharf-workers.js";

const REPOS = Number(process.env.BENCH_REPOS ?? 100_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const RUNS = Number(process.env.BENCH_RUNS ?? 2);

/** Runs the workers dimension and prints its report. */
export async function runApiWorkers(value: string): Promise<void> {
  const counts = workerCounts(value, availableParallelism());
  const bin = findPostgresBin();
  if (!bin)
    throw new Error(
      "the workers dimension needs the PostgreSQL server binaries (apt-get install postgresql)",
    );
  const databaseUrl = (await throwawayPostgres(bin)).urlOf("wharf_bench_api_workers");
  const dataDir = await mkdtemp(join(tmpdir(), "wharf-bench-api-workers-"));
  try {
    // Seeded through one in-process server (which also migrates the database), then closed.
    await ensurePostgresDatabase(databaseUrl);
    const seeder = await startServer(
      loadConfig({ dataDir, databaseUrl, apiAddr: "127.0.0.1:0", registryAddr: "127.0.0.1:0" }, {}),
      { logger: () => {} },
    );
    const { org, sampleUid } = await seedRepos(seeder, REPOS).finally(() => seeder.close());

    const figures = new ByWorkers();
    for (let run = 1; run <= RUNS; run++) {
      for (const workers of counts) {
        const base = await bareClusterLoad(workers, SECONDS);
        figures.addLoad("bare", workers, base);
        const wharf = await startWharfWorkers({
          workers,
          dataDir,
          databaseUrl,
          logFile: join(dataDir, "requests.log"),
        });
        try {
          const auth = { authorization: `Bearer ${wharf.apiToken}` };
          const loads: Array<[string, string]> = [
            ["GET", `${wharf.apiUrl}/registry/v2/repos/${sampleUid}`],
            ["list", `${wharf.apiUrl}/registry/v2/repos?uidp.descendants_of=${org}&page_size=50`],
          ];
          for (const [label, url] of loads) {
            const result = await wrkWithCpu(url, auth, SECONDS, wharf.cpuSeconds);
            if (result.errors > 0) throw new Error(`${label} at ${workers} workers: ${result.errors} errors`);
            figures.addLoad(label, workers, result);
          }
          console.log(
            `run ${run}, ${workers} worker(s): bare ${base.rps.toFixed(0)} req/s, GET ${figures.all("GET", workers).at(-1)?.toFixed(0)} req/s, list ${figures.all("list", workers).at(-1)?.toFixed(0)} req/s`,
          );
        } finally {
          await wharf.stop();
        }
      }
    }
    report(counts, figures);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

function report(counts: number[], f: ByWorkers): void {
  const lines = [
    "",
    `=== bench:api workers: ${REPOS} repos on PostgreSQL, wrk -t${WRK.threads} -c${WRK.connections} -d${SECONDS}s, ${RUNS} runs: median (min–max) ===`,
    "CPU: user + system of the primary and every worker (PostgreSQL's own not included).",
    "bare: node:cluster workers answering a constant, as many as Wharf's, under the same wrk load.",
    "",
    ...workersTable(counts, f, [
      ["REST GET req/s", "GET", 0],
      ["GET CPU µs/req", "GET cpu", 0],
      ["machine busy % (GET)", "GET busy", 0],
      ["list (50) req/s", "list", 0],
      ["list CPU µs/req", "list cpu", 0],
      ["bare req/s", "bare", 0],
      ["bare CPU µs/req", "bare cpu", 0],
    ]),
    "",
    scaling(counts, f, [
      ["REST GET", "GET"],
      ["list", "list"],
      ["bare node:cluster", "bare"],
    ]),
  ];
  console.log(lines.join("\n"));
}
