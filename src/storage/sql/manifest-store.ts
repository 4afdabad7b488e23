import type { Selectable } from "kysely";
import { notFound } from "../../core/errors.js";
import type { ManifestRow, ManifestStore } from "../registry-store.js";
import { readInt } from "./dialect.js";
import type { ManifestsTable } from "./schema.js";
import { guardWrite, type SqlContext } from "./sql-context.js";
import { countManifestAdded, countRemoved, referencesHeld } from "./usage-accounting.js";

function toManifestRow(r: Selectable<ManifestsTable>): ManifestRow {
  return {
    repoUid: r.repo_uid,
    digest: r.digest,
    mediaType: r.media_type,
    content: r.content,
    ...(r.subject_digest === null ? {} : { subjectDigest: r.subject_digest }),
    ...(r.artifact_type === null ? {} : { artifactType: r.artifact_type }),
    ...(r.annotations === null ? {} : { annotations: JSON.parse(r.annotations) }),
    createTime: readInt(r.create_time),
  };
}

/** ManifestStore over `manifests` and `manifest_references`; see registry-store.ts. */
export function createManifestStore(ctx: SqlContext): ManifestStore {
  const { db } = ctx;
  return {
    async get(repoUid, digest) {
      const r = await db
        .selectFrom("manifests")
        .selectAll()
        .where("repo_uid", "=", repoUid)
        .where("digest", "=", digest)
        .executeTakeFirst();
      return r && toManifestRow(r);
    },

    async has(repoUid, digest) {
      const r = await db
        .selectFrom("manifests")
        .select("digest")
        .where("repo_uid", "=", repoUid)
        .where("digest", "=", digest)
        .executeTakeFirst();
      return r !== undefined;
    },

    put(row, references) {
      return ctx.transaction(async (tx) => {
        const inserted = await guardWrite(
          tx,
          () =>
            tx.db
              .insertInto("manifests")
              .values({
                repo_uid: row.repoUid,
                digest: row.digest,
                media_type: row.mediaType,
                content: row.content,
                size: row.content.byteLength,
                subject_digest: row.subjectDigest ?? null,
                artifact_type: row.artifactType ?? null,
                annotations: row.annotations === undefined ? null : JSON.stringify(row.annotations),
                create_time: row.createTime,
              })
              .onConflict((oc) => oc.columns(["repo_uid", "digest"]).doNothing())
              .executeTakeFirst(),
          { foreignKey: () => notFound("repo", row.repoUid) },
        );
        if ((inserted.numInsertedOrUpdatedRows ?? 0n) === 0n) return;
        // On the change feed: a new manifest may be a signature, SBOM or VEX referrer (issue 37's caches).
        tx.changed("manifests");
        const unique = new Map(references.map((ref) => [ref.digest, ref.kind]));
        await countManifestAdded(
          tx,
          row.repoUid,
          { digest: row.digest, size: row.content.byteLength },
          references,
          row.createTime,
        );
        if (unique.size === 0) return;
        await tx.db
          .insertInto("manifest_references")
          .values(
            [...unique].map(([digest, kind]) => ({
              repo_uid: row.repoUid,
              manifest_digest: row.digest,
              digest,
              kind,
            })),
          )
          .execute();
      });
    },

    delete(repoUid, digest) {
      return ctx.transaction(async (tx) => {
        const held = await referencesHeld(tx, repoUid, digest);
        const result = await tx.db
          .deleteFrom("manifests")
          .where("repo_uid", "=", repoUid)
          .where("digest", "=", digest)
          .executeTakeFirst();
        if (result.numDeletedRows === 0n) return false;
        tx.changed("manifests");
        await countRemoved(tx, repoUid, held);
        return true;
      });
    },

    async referrers(repoUid, subjectDigest, artifactType) {
      let q = db
        .selectFrom("manifests")
        .select(["digest", "media_type", "size", "artifact_type", "annotations"])
        .where("repo_uid", "=", repoUid)
        .where("subject_digest", "=", subjectDigest);
      if (artifactType !== undefined) q = q.where("artifact_type", "=", artifactType);
      const rows = await q.orderBy("digest").execute();
      return rows.map((r) => ({
        digest: r.digest,
        mediaType: r.media_type,
        size: readInt(r.size),
        ...(r.artifact_type === null ? {} : { artifactType: r.artifact_type }),
        ...(r.annotations === null ? {} : { annotations: JSON.parse(r.annotations) }),
      }));
    },

    async referencedBy(repoUid, digest) {
      const rows = await db
        .selectFrom("manifest_references")
        .select("manifest_digest")
        .where("repo_uid", "=", repoUid)
        .where("digest", "=", digest)
        .orderBy("manifest_digest")
        .execute();
      return rows.map((r) => r.manifest_digest);
    },

    async indexesOf(repoUid, digest) {
      const rows = await db
        .selectFrom("manifest_references")
        .select("manifest_digest")
        .where("repo_uid", "=", repoUid)
        .where("digest", "=", digest)
        .where("kind", "=", "manifest")
        .orderBy("manifest_digest")
        .execute();
      return rows.map((r) => r.manifest_digest);
    },
  };
}
