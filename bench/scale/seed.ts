// Bulk seeding of a large deployment for `npm run bench:scale` (bench/scale.ts) and its shape test
// (test/e2e/bench-scale-seed.test.ts). Rows go in through SQL that generates them inside the
// database (generate_series on PostgreSQL, a recursive CTE on SQLite), never through the API or
// one INSERT per row, so a million tags seed in seconds. The schema is the real one: callers run
// the migrations first.
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { DialectName } from "../../src/storage/sql/dialect.js";
import type { Database } from "../../src/storage/sql/schema.js";

/** How many of each row a seeded deployment holds. */
export interface ScaleSizes {
  repos: number;
  tags: number;
  /** tag_history rows in all, the hot tag's included. */
  history: number;
  /** Of `history`, the rows of the hot tag (tag 0). */
  hot: number;
  /** Manifests (≥ tags: tag n points at manifest n; the rest are untagged). */
  manifests: number;
  /** Blob rows, each linked to the repo of manifest `n % manifests` and referenced by it. */
  blobs: number;
}

/** Issue 34's deployment: 10,000 repos, 1M tags, 10M history rows (100,000 on one tag), 1M manifests and blobs. */
export const FULL_SIZES: ScaleSizes = {
  repos: 10_000,
  tags: 1_000_000,
  history: 10_000_000,
  hot: 100_000,
  manifests: 1_000_000,
  blobs: 1_000_000,
};

/** `sizes` with every count multiplied by `factor` (rounded, at least 1; hot ≤ history). */
export function scaleSizes(sizes: ScaleSizes, factor: number): ScaleSizes {
  const f = (n: number) => Math.max(1, Math.round(n * factor));
  return {
    repos: f(sizes.repos),
    tags: f(sizes.tags),
    history: f(sizes.history),
    hot: Math.min(f(sizes.hot), f(sizes.history)),
    manifests: f(sizes.manifests),
    blobs: f(sizes.blobs),
  };
}

/** Throws a plain error naming the first inconsistent count (they come from the command line). */
export function checkSizes(sizes: ScaleSizes): void {
  for (const [key, value] of Object.entries(sizes)) {
    if (!Number.isSafeInteger(value) || value < 1)
      throw new Error(`--${key} must be a whole number ≥ 1, got ${value}`);
  }
  if (sizes.tags < sizes.repos) throw new Error(`--tags (${sizes.tags}) must be ≥ --repos (${sizes.repos})`);
  if (sizes.manifests < sizes.tags)
    throw new Error(`--manifests (${sizes.manifests}) must be ≥ --tags (${sizes.tags})`);
  if (sizes.hot > sizes.history)
    throw new Error(`--hot (${sizes.hot}) must be ≤ --history (${sizes.history})`);
  if (sizes.history - sizes.hot > 0 && sizes.tags < 2)
    throw new Error("history beyond the hot tag needs --tags ≥ 2");
}

/** The group every seeded repo is in. */
export const SEED_ORG = "bench";
/** Glob of the seeded EOL rules: every seeded tag name (`1.<j>`) matches it. */
export const SEED_EOL_GLOB = "1.*";
/** Width of the zero-padded numbers in seeded names, so byte order is numeric order. */
const REPO_WIDTH = 6;
const TAG_WIDTH = 8;
const BLOB_OFFSET = 1_000_000_000_000;

/** The uid and name of repo `i`. */
export function repoOf(i: number): { uid: string; name: string } {
  const name = `r${String(i).padStart(REPO_WIDTH, "0")}`;
  return { uid: `${SEED_ORG}/${name}`, name };
}

/** Tag `n`: in repo `n % repos`, named `1.<n / repos>`, pointing at manifest `n`. */
export function tagOf(
  n: number,
  sizes: Pick<ScaleSizes, "repos">,
): { repoUid: string; name: string; uid: string } {
  const repo = repoOf(n % sizes.repos);
  const j = Math.floor(n / sizes.repos);
  return { repoUid: repo.uid, name: `1.${j}`, uid: `${repo.uid}/t${String(j).padStart(TAG_WIDTH, "0")}` };
}

/** The digest of manifest `n` (64 hex digits of n). */
export function manifestDigest(n: number): string {
  return `sha256:${n.toString(16).padStart(64, "0")}`;
}

/** Repos whose names the seeded EOL rules cover: 1% of them (at least one), repos 0, 100, 200, … */
export function eolRuleRepos(sizes: Pick<ScaleSizes, "repos">): number[] {
  const step = Math.min(sizes.repos, 100);
  const out: number[] = [];
  for (let i = 0; i < sizes.repos; i += step) out.push(i);
  return out;
}

/** What seeding took, per table, in ms. */
export type SeedTimings = Record<string, number>;

/**
 * Seeds `sizes` into the empty, migrated database `db` (one transaction per table). Every time is
 * at least 60 days before `now`, older than GC's default history window, so GC keeps exactly the
 * tagged manifests. The hot tag is tag 0 (`r000000`, `1.0`); its history update times are distinct.
 */
export async function seedScale(
  db: Kysely<Database>,
  engine: DialectName,
  sizes: ScaleSizes,
  now = Date.now(),
): Promise<SeedTimings> {
  checkSizes(sizes);
  const pg = engine === "postgres";
  const base = now - 90 * 24 * 60 * 60 * 1000;
  const int = (n: number) => sql.raw(String(Math.trunc(n)));
  // n in [0, count): generate_series, or a recursive CTE (SQLite has no generate_series built in).
  const series = (count: number): RawBuilder<unknown> =>
    pg
      ? sql`(select n from generate_series(0::bigint, ${int(count - 1)}) as g(n)) as s`
      : sql`(with recursive c(n) as (select 0 union all select n + 1 from c where n < ${int(count - 1)}) select n from c) as s`;
  const pad = (expr: RawBuilder<unknown>, width: number) =>
    pg
      ? sql`lpad((${expr})::text, ${int(width)}, '0')`
      : sql`printf('%0${sql.raw(String(width))}d', ${expr})`;
  const hex64 = (expr: RawBuilder<unknown>) =>
    pg ? sql`'sha256:' || lpad(to_hex(${expr}), 64, '0')` : sql`printf('sha256:%064x', ${expr})`;
  // Parenthesized: SQLite's || binds tighter than /.
  const div = (a: RawBuilder<unknown>, b: number) => sql`((${a}) / ${int(b)})`;
  const falseValue = pg ? sql`false` : sql`0`;
  const content = pg
    ? sql`convert_to('{"schemaVersion":2}', 'UTF8')`
    : sql`cast('{"schemaVersion":2}' as blob)`;
  const n = sql`s.n`;
  const R = sizes.repos;
  const repoUid = (i: RawBuilder<unknown>) => sql`${SEED_ORG} || '/r' || ${pad(i, REPO_WIDTH)}`;

  // SQLite: a 2 GiB page cache for the seed's connection, so 10M history rows do not insert into an
  // index that no longer fits the default 2 MiB (a full run's seed went from minutes of disk churn to
  // CPU-bound). PostgreSQL's server settings are its own.
  if (!pg) await sql`pragma cache_size = -2097152`.execute(db);
  const timings: SeedTimings = {};
  const step = async (table: string, statements: RawBuilder<unknown>[]) => {
    const t0 = performance.now();
    await db.transaction().execute(async (tx) => {
      for (const statement of statements) await statement.execute(tx);
    });
    timings[table] = performance.now() - t0;
  };

  await step("groups", [
    sql`insert into groups (uid, parent_uid, name, description, verified, create_time, update_time)
        values (${SEED_ORG}, '', ${SEED_ORG}, 'bench:scale', ${falseValue}, ${int(base)}, ${int(base)})`,
  ]);
  await step("repos", [
    sql`insert into repos (uid, parent_uid, name, description, readme, create_time, update_time)
        select ${repoUid(n)}, ${SEED_ORG}, 'r' || ${pad(n, REPO_WIDTH)}, '', '', ${int(base)} + s.n, ${int(base)} + s.n
        from ${series(R)}`,
  ]);
  const M = sizes.manifests;
  await step("manifests", [
    sql`insert into manifests (repo_uid, digest, media_type, content, size, subject_digest, artifact_type, annotations, create_time)
        select ${repoUid(sql`s.n % ${int(R)}`)}, ${hex64(n)}, 'application/vnd.oci.image.manifest.v1+json',
               ${content}, 19, null, null, null, ${int(base)} + s.n
        from ${series(M)}`,
  ]);
  await step("blobs", [
    sql`insert into blobs (digest, size, create_time)
        select ${hex64(sql`s.n + ${int(BLOB_OFFSET)}`)}, 2, ${int(base)} + s.n from ${series(sizes.blobs)}`,
    sql`insert into repo_blobs (repo_uid, digest, create_time)
        select ${repoUid(sql`(s.n % ${int(M)}) % ${int(R)}`)}, ${hex64(sql`s.n + ${int(BLOB_OFFSET)}`)}, ${int(base)} + s.n
        from ${series(sizes.blobs)}`,
    sql`insert into manifest_references (repo_uid, manifest_digest, digest, kind)
        select ${repoUid(sql`(s.n % ${int(M)}) % ${int(R)}`)}, ${hex64(sql`s.n % ${int(M)}`)},
               ${hex64(sql`s.n + ${int(BLOB_OFFSET)}`)}, 'blob'
        from ${series(sizes.blobs)}`,
  ]);
  await step("tags", [
    sql`insert into tags (uid, parent_uid, name, digest, deprecated, create_time, update_time)
        select ${repoUid(sql`s.n % ${int(R)}`)} || '/t' || ${pad(div(n, R), TAG_WIDTH)}, ${repoUid(sql`s.n % ${int(R)}`)},
               '1.' || ${div(n, R)}, ${hex64(n)}, ${falseValue}, ${int(base)} + s.n, ${int(base)} + s.n
        from ${series(sizes.tags)}`,
  ]);
  const rest = sizes.history - sizes.hot;
  const T = sizes.tags;
  // Tag k of the other rows: 1 + n % (T - 1), so every tag but the hot one gets about the same share.
  const k = sql`(1 + s.n % ${int(Math.max(1, T - 1))})`;
  await step("tag_history", [
    sql`insert into tag_history (repo_uid, tag_name, digest, update_time)
        select ${repoUid(sql`0`)}, '1.0', ${hex64(sql`s.n % ${int(M)}`)}, ${int(base)} + s.n from ${series(sizes.hot)}`,
    ...(rest > 0
      ? [
          sql`insert into tag_history (repo_uid, tag_name, digest, update_time)
              select ${repoUid(sql`${k} % ${int(R)}`)}, '1.' || ${div(k, R)}, ${hex64(k)}, ${int(base + sizes.hot)} + s.n
              from ${series(rest)}`,
        ]
      : []),
  ]);
  await step("eol_rules", [
    sql`insert into eol_rules (org_uid, repo_name, tag_glob, like_pattern, product, create_time)
        values ${sql.join(
          eolRuleRepos(sizes).map(
            (i) => sql`(${SEED_ORG}, ${repoOf(i).name}, ${SEED_EOL_GLOB}, '1.%', 'bench', ${int(base)})`,
          ),
        )}`,
  ]);
  const t0 = performance.now();
  await sql`analyze`.execute(db);
  timings.analyze = performance.now() - t0;
  return timings;
}
