// Data at scale (`npm run bench:scale`, issue 34): seeds a large deployment through bulk SQL on the
// real schema (bench/scale/seed.ts), then times reads, ListEolTags, totalCount and `gc --dry-run`
// through the real Store, against the same shape 1000× smaller. A report, not a test (exits 0
// unless something errored).
//
//   npm run bench:scale -- [--engine sqlite|postgres|both] [--scale F] [--samples N] [--gc-runs N]
//                          [--repos N] [--tags N] [--history N] [--hot N] [--manifests N] [--blobs N]
//                          [--small-factor N] [--json FILE]
//
// Sizes default to issue 34's deployment (10k repos, 1M tags, 10M history rows with 100k on one
// tag, 1M manifests and blobs) times --scale (default 1); an explicit size overrides it. The small
// deployment is every size divided by --small-factor (default 1000). PostgreSQL runs on a
// throwaway cluster (test/support/postgres-cluster.ts), or on WHARF_BENCH_DATABASE_URL's server.
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { existingPostgres, findPostgresBin, throwawayPostgres } from "../test/support/postgres-cluster.js";
import { seedDeployment } from "./scale/deployment.js";
import { ms } from "./scale/measure.js";
import { type ScaleFigures, timeOperations } from "./scale/operations.js";
import { checkSizes, FULL_SIZES, type ScaleSizes, scaleSizes } from "./scale/seed.js";

const { values } = parseArgs({
  options: {
    engine: { type: "string", default: "both" },
    scale: { type: "string", default: "1" },
    samples: { type: "string", default: "200" },
    "gc-runs": { type: "string", default: "3" },
    "small-factor": { type: "string", default: "1000" },
    repos: { type: "string" },
    tags: { type: "string" },
    history: { type: "string" },
    hot: { type: "string" },
    manifests: { type: "string" },
    blobs: { type: "string" },
    json: { type: "string" },
  },
});
const num = (name: string, text: string | undefined) => {
  const n = Number(text);
  if (text === undefined || !Number.isFinite(n) || n <= 0)
    throw new Error(`--${name} must be a positive number, got ${text}`);
  return n;
};
const scaled = scaleSizes(FULL_SIZES, num("scale", values.scale));
const large: ScaleSizes = { ...scaled };
for (const key of Object.keys(large) as (keyof ScaleSizes)[]) {
  if (values[key] !== undefined) large[key] = num(key, values[key]);
}
checkSizes(large);
const smallFactor = num("small-factor", values["small-factor"]);
const small = scaleSizes(large, 1 / smallFactor);
const samples = num("samples", values.samples);
const gcRuns = num("gc-runs", values["gc-runs"]);
const engines = values.engine === "both" ? ["sqlite", "postgres"] : [values.engine];
for (const e of engines)
  if (e !== "sqlite" && e !== "postgres") throw new Error(`--engine: unknown engine ${e}`);

const postgresServer = engines.includes("postgres")
  ? process.env.WHARF_BENCH_DATABASE_URL
    ? existingPostgres(process.env.WHARF_BENCH_DATABASE_URL)
    : await (async () => {
        const bin = findPostgresBin();
        if (!bin)
          throw new Error("bench:scale on PostgreSQL needs the server binaries (apt-get install postgresql)");
        return throwawayPostgres(bin);
      })()
  : undefined;

const describe = (s: ScaleSizes) =>
  `${s.repos} repos, ${s.tags} tags, ${s.history} history rows (${s.hot} on the hot tag), ${s.manifests} manifests, ${s.blobs} blobs`;

interface Run {
  sizes: ScaleSizes;
  seedSeconds: number;
  seedMs: Record<string, number>;
  bytes: number;
  result: ScaleFigures;
}

async function run(engine: string, sizes: ScaleSizes): Promise<Run> {
  const t0 = performance.now();
  const deployment = await seedDeployment(sizes, engine === "postgres" ? postgresServer : undefined);
  const seedSeconds = (performance.now() - t0) / 1000;
  console.error(`[${engine}] seeded ${describe(sizes)} in ${seedSeconds.toFixed(1)} s`);
  try {
    const store = await deployment.open();
    const uncounted = await deployment.open({ listCountTtlMs: 0 });
    const result = await timeOperations({ store, uncounted }, sizes, samples, gcRuns);
    return { sizes, seedSeconds, seedMs: deployment.seedMs, bytes: deployment.bytes, result };
  } finally {
    await deployment.dispose();
  }
}

const report: Record<string, { large: Run; small: Run }> = {};
console.log(
  `bench:scale — large: ${describe(large)}; small: ${describe(small)}; ${samples} samples per read`,
);
for (const engine of engines) {
  const smallRun = await run(engine, small);
  const largeRun = await run(engine, large);
  report[engine] = { large: largeRun, small: smallRun };
  const { figures } = largeRun.result;
  const smallFigures = smallRun.result.figures;
  console.log(
    `\n## ${engine}: seed ${largeRun.seedSeconds.toFixed(1)} s (${JSON.stringify(
      Object.fromEntries(Object.entries(largeRun.seedMs).map(([k, v]) => [k, Math.round(v)])),
    )})`,
  );
  console.log(
    `database ${(largeRun.bytes / 2 ** 20).toFixed(0)} MiB = ${((largeRun.bytes / 2 ** 20) * (1e6 / large.tags)).toFixed(0)} MiB per million tags (small: ${(smallRun.bytes / 2 ** 20).toFixed(1)} MiB)`,
  );
  console.log(
    `deep page: ${largeRun.result.deepPage} large, ${smallRun.result.deepPage} small (the last one), ${50} rows each`,
  );
  console.log("| operation | large p50 ms | large p99 ms | small p50 ms | small p99 ms | p50 ratio |");
  console.log("|---|---:|---:|---:|---:|---:|");
  const smallNames = Object.keys(smallFigures);
  Object.entries(figures).forEach(([name, f], i) => {
    const s = smallFigures[name] ?? smallFigures[smallNames[i] ?? ""];
    const label = s && smallFigures[name] === undefined ? `${name} (small: ${smallNames[i]})` : name;
    console.log(
      `| ${label} | ${ms(f.p50)} | ${ms(f.p99)} | ${s ? ms(s.p50) : "-"} | ${s ? ms(s.p99) : "-"} | ${s ? (f.p50 / s.p50).toFixed(1) : "-"}× |`,
    );
  });
  const phases = (r: Run) =>
    Object.entries(r.result.gcPhases)
      .map(([k, v]) => `${k} ${ms(v)}`)
      .join(", ");
  console.log(
    `gc --dry-run phases (ms, mean of ${gcRuns}): large: ${phases(largeRun)}; small: ${phases(smallRun)}`,
  );
}
if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 1)}\n`);
process.exit(0);
