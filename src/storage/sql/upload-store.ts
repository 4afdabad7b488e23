import { type Selectable, type SqlBool, sql } from "kysely";
import { notFound } from "../../core/errors.js";
import type { UploadRow, UploadStore } from "../registry-store.js";
import { readInt } from "./dialect.js";
import type { UploadsTable } from "./schema.js";
import { guardWrite, type SqlContext } from "./sql-context.js";

function toUploadRow(r: Selectable<UploadsTable>): UploadRow {
  return {
    id: r.id,
    repoUid: r.repo_uid,
    identityUid: r.identity_uid,
    size: readInt(r.size),
    createTime: readInt(r.create_time),
    updateTime: readInt(r.update_time),
  };
}

/** UploadStore over `uploads`; see registry-store.ts. */
export function createUploadStore(ctx: SqlContext): UploadStore {
  const { db } = ctx;
  return {
    async get(id) {
      const r = await db.selectFrom("uploads").selectAll().where("id", "=", id).executeTakeFirst();
      return r && toUploadRow(r);
    },

    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("uploads")
            .values({
              id: row.id,
              repo_uid: row.repoUid,
              identity_uid: row.identityUid,
              size: row.size,
              create_time: row.createTime,
              update_time: row.updateTime,
            })
            .execute(),
        { foreignKey: () => notFound("repo", row.repoUid) },
      );
    },

    async advance(id, expectedSize, size, now) {
      const result = await db
        .updateTable("uploads")
        .set({ size, update_time: now })
        .where("id", "=", id)
        .where(sql<SqlBool>`size = ${expectedSize}`)
        .executeTakeFirst();
      return result.numUpdatedRows > 0n;
    },

    async delete(id) {
      const result = await db.deleteFrom("uploads").where("id", "=", id).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },

    async staleBefore(time) {
      const rows = await db
        .selectFrom("uploads")
        .selectAll()
        .where(sql<SqlBool>`update_time < ${time}`)
        .execute();
      return rows.map(toUploadRow);
    },
  };
}
