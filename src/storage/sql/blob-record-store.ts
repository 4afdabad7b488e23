import { notFound } from "../../core/errors.js";
import type { BlobRecordStore, BlobRow } from "../registry-store.js";
import { readInt } from "./dialect.js";
import { guardWrite, type SqlContext } from "./sql-context.js";
import { countBlobArrived } from "./usage-accounting.js";

/** BlobRecordStore over `blobs` and `repo_blobs`; see registry-store.ts. */
export function createBlobRecordStore(ctx: SqlContext): BlobRecordStore {
  const { db } = ctx;
  const toRow = (r: { digest: string; size: bigint; create_time: bigint }): BlobRow => ({
    digest: r.digest,
    size: readInt(r.size),
    createTime: readInt(r.create_time),
  });
  return {
    async get(digest) {
      const r = await db.selectFrom("blobs").selectAll().where("digest", "=", digest).executeTakeFirst();
      return r && toRow(r);
    },

    async getLinked(repoUid, digest) {
      const r = await db
        .selectFrom("repo_blobs")
        .innerJoin("blobs", "blobs.digest", "repo_blobs.digest")
        .select(["blobs.digest", "blobs.size", "blobs.create_time"])
        .where("repo_blobs.repo_uid", "=", repoUid)
        .where("repo_blobs.digest", "=", digest)
        .executeTakeFirst();
      return r && toRow(r);
    },

    link(repoUid, blob, now) {
      return ctx.transaction(async (tx) => {
        const inserted = await tx.db
          .insertInto("blobs")
          .values({ digest: blob.digest, size: blob.size, create_time: blob.createTime })
          .onConflict((oc) => oc.column("digest").doNothing())
          .returning("digest")
          .execute();
        if (inserted.length > 0) await countBlobArrived(tx, blob.digest, blob.size);
        await guardWrite(
          tx,
          () =>
            tx.db
              .insertInto("repo_blobs")
              .values({ repo_uid: repoUid, digest: blob.digest, create_time: now })
              .onConflict((oc) => oc.columns(["repo_uid", "digest"]).doNothing())
              .execute(),
          { foreignKey: () => notFound("repo", repoUid) },
        );
      });
    },

    async unlink(repoUid, digest) {
      const result = await db
        .deleteFrom("repo_blobs")
        .where("repo_uid", "=", repoUid)
        .where("digest", "=", digest)
        .executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async anyRecorded() {
      return (await db.selectFrom("blobs").select("digest").limit(1).executeTakeFirst()) !== undefined;
    },
  };
}
