import { sql } from "kysely";
import { rootOf } from "../../core/uidp.js";
import type { ManifestReference } from "../registry-store.js";
import { readInt } from "./dialect.js";
import { precompiled, precompiledBySize, type SqlContext } from "./sql-context.js";

// Run by every manifest commit: compiled once per engine (and IN-list or row count).
const selectBlobSizes = precompiledBySize((db, n) =>
  db
    .selectFrom("blobs")
    .select(["digest", "size"])
    .where(
      "digest",
      "in",
      Array.from({ length: n }, () => ""),
    ),
);
const upsertRefs = precompiledBySize((db, n) =>
  db
    .insertInto("org_usage_digests")
    .values(Array.from({ length: n }, () => ({ org_uid: "", digest: "", size: 0, refs: 0 })))
    .onConflict((oc) =>
      oc.columns(["org_uid", "digest"]).doUpdateSet({ refs: sql`org_usage_digests.refs + excluded.refs` }),
    )
    .returning(["digest", "refs", "size"]),
);
const upsertBytes = precompiled((db) =>
  db
    .insertInto("org_usage")
    .values({ org_uid: "", storage_bytes: 0, quota_storage_bytes: 0, quota_repo_count: 0, update_time: 0 })
    .onConflict((oc) =>
      oc
        .column("org_uid")
        .doUpdateSet({ storage_bytes: sql`org_usage.storage_bytes + excluded.storage_bytes` }),
    ),
);

/**
 * The incremental upkeep of `org_usage` and `org_usage_digests` (migration 0018, ADR 0047), called
 * by the sub-stores that add or remove manifest rows, inside their transaction. A digest counts
 * once per organization while anything references it: each manifest row of that digest and each
 * blob reference of such a manifest holds one reference.
 */

/** Advisory-lock class of blob digests counted before their row exists (PostgreSQL); the second key is the digest's hash. */
const DIGEST_LOCK_CLASS = 0x75736167; // "usag"

/**
 * On PostgreSQL, locks `digests` (in one order, so two writers cannot deadlock) until the
 * transaction ends, and resolves true; SQLite runs one writer at a time and needs none (false).
 * A manifest commit counting a blob that has no row yet and the first link of that blob take the
 * same lock: whichever comes second sees what the first committed, so the count never keeps the
 * placeholder size (READ COMMITTED alone lets each miss the other's uncommitted row).
 */
async function lockDigests(ctx: SqlContext, digests: readonly string[]): Promise<boolean> {
  if (ctx.dialect.name !== "postgres") return false;
  for (const digest of [...digests].sort()) {
    await sql`select pg_advisory_xact_lock(${DIGEST_LOCK_CLASS}, hashtext(${digest}))`.execute(ctx.db);
  }
  return true;
}

/** The OCI empty blob (`{}`): referenced without an upload by every artifact manifest, so never locked. */
const EMPTY_BLOB_DIGEST = "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a";

/**
 * The OCI empty blob (`{}`) is the one blob a manifest may reference without a blob row (no upload
 * is needed for it); its size is 2.
 */
const MISSING_BLOB_SIZE = 2;

/** One digest gaining or losing `n` references. */
interface DigestRefs {
  digest: string;
  size: number;
  n: number;
}

function merge(items: readonly DigestRefs[]): DigestRefs[] {
  const byDigest = new Map<string, DigestRefs>();
  for (const item of items) {
    const seen = byDigest.get(item.digest);
    if (seen) seen.n += item.n;
    else byDigest.set(item.digest, { ...item });
  }
  // One order for every writer: concurrent pushes lock the same rows in the same order (PostgreSQL).
  return [...byDigest.values()].sort((a, b) => (a.digest < b.digest ? -1 : a.digest > b.digest ? 1 : 0));
}

/** Adds the references of a manifest just inserted into `repoUid`; resolves to the bytes it added. */
export async function countManifestAdded(
  ctx: SqlContext,
  repoUid: string,
  manifest: { digest: string; size: number },
  references: readonly ManifestReference[],
  now: number,
): Promise<number> {
  const blobDigests = [...new Set(references.filter((r) => r.kind === "blob").map((r) => r.digest))];
  const sizes = new Map<string, number>();
  const readSizes = async (digests: string[]) => {
    if (digests.length === 0) return;
    for (const r of await selectBlobSizes(ctx, digests.length, digests)) sizes.set(r.digest, readInt(r.size));
  };
  await readSizes(blobDigests);
  // Only a pull-through cache's manifests name blobs with no row yet (ADR 0052); lock those digests
  // and read again, so a blob linked meanwhile is either seen here or sees this count (countBlobArrived).
  const absent = blobDigests.filter((digest) => !sizes.has(digest) && digest !== EMPTY_BLOB_DIGEST);
  if (absent.length > 0 && (await lockDigests(ctx, absent))) await readSizes(absent);
  const items = merge([
    { digest: manifest.digest, size: manifest.size, n: 1 },
    ...blobDigests.map((digest) => ({ digest, size: sizes.get(digest) ?? MISSING_BLOB_SIZE, n: 1 })),
  ]);
  return addRefs(ctx, rootOf(repoUid), items, now);
}

async function addRefs(ctx: SqlContext, orgUid: string, items: DigestRefs[], now: number): Promise<number> {
  const rows = await upsertRefs(
    ctx,
    items.length,
    items.flatMap((i) => [orgUid, i.digest, i.size, i.n]),
  );
  const added = new Map(items.map((i) => [i.digest, i.n]));
  let bytes = 0;
  // A row whose count is exactly what this write added was not counted before.
  for (const r of rows) if (readInt(r.refs) === added.get(r.digest)) bytes += readInt(r.size);
  if (bytes > 0) await addBytes(ctx, orgUid, bytes, now);
  return bytes;
}

/**
 * A blob row just recorded for `digest`: organizations that counted it before it existed (a
 * pull-through cache records manifests before their blobs, ADR 0052) counted its placeholder size;
 * their rows and totals take its real `size` now, so the incremental usage stays what `recount`
 * computes from the blob rows. Pushes link every blob before a manifest names it: nothing to do.
 */
export async function countBlobArrived(ctx: SqlContext, digest: string, size: number): Promise<void> {
  await lockDigests(ctx, [digest]);
  const counted = await ctx.db
    .selectFrom("org_usage_digests")
    .select(["org_uid", "size"])
    .where("digest", "=", digest)
    .where("size", "<>", BigInt(size))
    .execute();
  for (const row of counted) {
    await ctx.db
      .updateTable("org_usage_digests")
      .set({ size })
      .where("org_uid", "=", row.org_uid)
      .where("digest", "=", digest)
      .execute();
    await ctx.db
      .updateTable("org_usage")
      .set({ storage_bytes: sql`storage_bytes + ${size - readInt(row.size)}` })
      .where("org_uid", "=", row.org_uid)
      .execute();
  }
}

/** Adds `bytes` to the organization's total (creating its row at `now`). */
async function addBytes(ctx: SqlContext, orgUid: string, bytes: number, now: number): Promise<void> {
  await upsertBytes(ctx, [orgUid, bytes, 0, 0, now]);
}

/**
 * The references held by manifests of `repoUid` (one manifest with `digest`, else all of them), by
 * digest: read before those manifests are deleted, for `countRemoved` after.
 */
export async function referencesHeld(
  ctx: SqlContext,
  repoUid: string,
  digest?: string,
): Promise<DigestRefs[]> {
  const oneManifest = digest === undefined ? sql`` : sql` and digest = ${digest}`;
  const oneReferrer = digest === undefined ? sql`` : sql` and manifest_digest = ${digest}`;
  const { rows } = await sql<{ digest: string; n: number | bigint }>`
    select digest, count(*) as n from (
      select digest from manifests where repo_uid = ${repoUid}${oneManifest}
      union all
      select digest from manifest_references where repo_uid = ${repoUid} and kind = 'blob'${oneReferrer}
    ) held group by digest`.execute(ctx.db);
  return rows.map((r) => ({ digest: r.digest, size: 0, n: readInt(r.n) }));
}

/** Drops references read by `referencesHeld` once their manifests are gone; resolves to the bytes freed. */
export async function countRemoved(
  ctx: SqlContext,
  repoUid: string,
  held: readonly DigestRefs[],
): Promise<number> {
  if (held.length === 0) return 0;
  const orgUid = rootOf(repoUid);
  const items = merge(held);
  const byCount = new Map<number, string[]>();
  for (const i of items) byCount.set(i.n, [...(byCount.get(i.n) ?? []), i.digest]);
  let bytes = 0;
  for (const [n, digests] of byCount) {
    for (let start = 0; start < digests.length; start += 500) {
      const chunk = digests.slice(start, start + 500);
      await ctx.db
        .updateTable("org_usage_digests")
        .set({ refs: sql`refs - ${n}` })
        .where("org_uid", "=", orgUid)
        .where("digest", "in", chunk)
        .execute();
      const gone = await ctx.db
        .deleteFrom("org_usage_digests")
        .where("org_uid", "=", orgUid)
        .where("digest", "in", chunk)
        .where("refs", "<=", 0n)
        .returning("size")
        .execute();
      for (const r of gone) bytes += readInt(r.size);
    }
  }
  if (bytes > 0) {
    await ctx.db
      .updateTable("org_usage")
      .set({ storage_bytes: sql`storage_bytes - ${bytes}` })
      .where("org_uid", "=", orgUid)
      .execute();
  }
  return bytes;
}
