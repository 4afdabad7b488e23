import { type RawBuilder, type SqlBool, sql } from "kysely";
import type { GarbageBounds, GarbageStore } from "../registry-store.js";
import { readInt } from "./dialect.js";
import type { SqlContext } from "./sql-context.js";
import { countRemoved, referencesHeld } from "./usage-accounting.js";

/** The advisory lock key of the registry lock (any constant; "wharf-gc" as ASCII). */
const REGISTRY_LOCK_KEY = 0x77686172662d6763n;

/**
 * True for a manifest row `m` that nothing keeps alive (see GarbageStore). Written once, used by
 * both the candidate query and the re-checking delete.
 */
function deadPredicate(bounds: GarbageBounds): RawBuilder<SqlBool> {
  const { graceStart, windowStart } = bounds;
  return sql<SqlBool>`m.create_time < ${graceStart}
    and not exists (select 1 from tags t where t.parent_uid = m.repo_uid and t.digest = m.digest)
    and not exists (
      select 1 from tag_history h
      where h.repo_uid = m.repo_uid and h.digest = m.digest
        and (h.update_time >= ${windowStart} or not exists (
          select 1 from tag_history h2
          where h2.repo_uid = h.repo_uid and h2.tag_name = h.tag_name
            and h2.id > h.id and h2.update_time < ${windowStart})))
    and not exists (
      select 1 from manifest_references r
      where r.repo_uid = m.repo_uid and r.digest = m.digest and r.kind = 'manifest')
    and (m.subject_digest is null or not exists (
      select 1 from manifests s where s.repo_uid = m.repo_uid and s.digest = m.subject_digest))`;
}

/** GarbageStore over the registry tables; see registry-store.ts. */
export function createGarbageStore(ctx: SqlContext): GarbageStore {
  const { db } = ctx;
  return {
    async lockRegistry(mode) {
      if (ctx.dialect.name !== "postgres") return;
      if (!ctx.inTransaction) throw new Error("lockRegistry outside a transaction would release at once");
      const key = sql.lit(REGISTRY_LOCK_KEY.toString());
      await (mode === "shared"
        ? sql`select pg_advisory_xact_lock_shared(${key}::bigint)`
        : sql`select pg_advisory_xact_lock(${key}::bigint)`
      ).execute(db);
    },

    async deadManifests(bounds, limit) {
      const result = await sql<{ repo_uid: string; digest: string }>`
        select m.repo_uid, m.digest from manifests m where ${deadPredicate(bounds)}
        order by m.repo_uid, m.digest limit ${limit}`.execute(db);
      return result.rows.map((r) => ({ repoUid: r.repo_uid, digest: r.digest }));
    },

    deleteIfDead(repoUid, digest, bounds) {
      return ctx.transaction(async (tx) => {
        const held = await referencesHeld(tx, repoUid, digest);
        const result = await sql`
          delete from manifests where repo_uid = ${repoUid} and digest = ${digest}
            and exists (select 1 from manifests m
                        where m.repo_uid = ${repoUid} and m.digest = ${digest} and ${deadPredicate(bounds)})`.execute(
          tx.db,
        );
        if ((result.numAffectedRows ?? 0n) === 0n) return false;
        await countRemoved(tx, repoUid, held);
        return true;
      });
    },

    async deleteUnreferencedLinks(graceStart) {
      const result = await sql`
        delete from repo_blobs where create_time < ${graceStart}
          and not exists (select 1 from manifest_references r
                          where r.repo_uid = repo_blobs.repo_uid and r.digest = repo_blobs.digest)`.execute(
        db,
      );
      return Number(result.numAffectedRows ?? 0n);
    },

    async orphanBlobs(graceStart, limit) {
      const rows = await db
        .selectFrom("blobs")
        .selectAll()
        .where(sql<SqlBool>`create_time < ${graceStart}`)
        .where(sql<SqlBool>`not exists (select 1 from repo_blobs l where l.digest = blobs.digest)`)
        .where(sql<SqlBool>`not exists (select 1 from vuln_reports v where v.raw_digest = blobs.digest)`)
        .orderBy("digest")
        .limit(limit)
        .execute();
      return rows.map((r) => ({
        digest: r.digest,
        size: readInt(r.size),
        createTime: readInt(r.create_time),
      }));
    },

    async deleteIfOrphan(digest, graceStart) {
      const result = await db
        .deleteFrom("blobs")
        .where("digest", "=", digest)
        .where(sql<SqlBool>`create_time < ${graceStart}`)
        .where(sql<SqlBool>`not exists (select 1 from repo_blobs l where l.digest = blobs.digest)`)
        .where(sql<SqlBool>`not exists (select 1 from vuln_reports v where v.raw_digest = blobs.digest)`)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
