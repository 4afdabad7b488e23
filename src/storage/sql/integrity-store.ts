import { type SqlBool, sql } from "kysely";
import type { IntegrityStore } from "../integrity-store.js";
import type { BlobRow } from "../registry-store.js";
import { readInt } from "./dialect.js";
import type { SqlContext } from "./sql-context.js";
import { toTagRow } from "./tag-store.js";

/**
 * IntegrityStore over the registry tables (`blobs`, `manifest_references`, `manifests`, `tags`);
 * see integrity-store.ts. Every walk is keyset-paged on a primary key or an index, so a page is one
 * indexed range read on both engines.
 */
export function createIntegrityStore(ctx: SqlContext): IntegrityStore {
  const { db } = ctx;
  const toBlob = (r: { digest: string; size: bigint | number; create_time: bigint | number }): BlobRow => ({
    digest: r.digest,
    size: readInt(r.size),
    createTime: readInt(r.create_time),
  });
  return {
    async blobPage(after, limit) {
      let query = db.selectFrom("blobs").selectAll().orderBy("digest").limit(limit);
      if (after !== undefined) query = query.where("digest", ">", after);
      return (await query.execute()).map(toBlob);
    },

    async referencedBlobPage(after, limit) {
      let query = db
        .selectFrom("manifest_references as r")
        .leftJoin("blobs as b", "b.digest", "r.digest")
        .select(["r.digest as digest", "b.size as size"])
        .distinct()
        .where("r.kind", "=", "blob")
        .orderBy("r.digest")
        .limit(limit);
      if (after !== undefined) query = query.where("r.digest", ">", after);
      const rows = await query.execute();
      return rows.map((r) => ({
        digest: r.digest,
        size: r.size === null || r.size === undefined ? undefined : readInt(r.size),
      }));
    },

    async unreferencedBlobPage(after, limit) {
      let query = db
        .selectFrom("blobs")
        .selectAll()
        .where(sql<SqlBool>`not exists (select 1 from manifest_references r where r.digest = blobs.digest)`)
        .orderBy("digest")
        .limit(limit);
      if (after !== undefined) query = query.where("digest", ">", after);
      return (await query.execute()).map(toBlob);
    },

    async danglingTagPage(after, limit) {
      let query = db
        .selectFrom("tags")
        .selectAll()
        .where(
          sql<SqlBool>`not exists (select 1 from manifests m where m.repo_uid = tags.parent_uid and m.digest = tags.digest)`,
        )
        .orderBy("uid")
        .limit(limit);
      if (after !== undefined) query = query.where("uid", ">", after);
      return (await query.execute()).map(toTagRow);
    },

    async referencingManifests(digest, repoUid) {
      let query = db
        .selectFrom("manifest_references")
        .select(["repo_uid", "manifest_digest"])
        .distinct()
        .where("digest", "=", digest)
        .orderBy("repo_uid")
        .orderBy("manifest_digest");
      if (repoUid !== undefined) query = query.where("repo_uid", "=", repoUid);
      return (await query.execute()).map((r) => ({ repoUid: r.repo_uid, digest: r.manifest_digest }));
    },
  };
}
