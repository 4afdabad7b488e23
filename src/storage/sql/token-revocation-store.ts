import { type SqlBool, sql } from "kysely";
import type { TokenRevocationRow, TokenRevocationStore } from "../auth-store.js";
import { readInt } from "./dialect.js";
import type { SqlContext } from "./sql-context.js";

/**
 * TokenRevocationStore over `token_revocations`; see `TokenRevocationStore` in auth-store.ts.
 * `version` is one aggregate over a table of a handful of rows: `count(*)` and `max(id)`.
 */
export function createTokenRevocationStore(ctx: SqlContext): TokenRevocationStore {
  const { db } = ctx;
  return {
    async insert(row) {
      const inserted = await db
        .insertInto("token_revocations")
        .values({
          subject: row.subject ?? null,
          issued_before: row.issuedBefore,
          create_time: row.createTime,
          expire_time: row.expireTime,
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      ctx.changed("token_revocations");
      return { ...row, id: readInt(inserted.id) };
    },

    async listLive(now) {
      const rows = await db
        .selectFrom("token_revocations")
        .selectAll()
        .where(sql<SqlBool>`expire_time > ${now}`)
        .orderBy("id")
        .execute();
      return rows.map((r) => {
        const row: TokenRevocationRow = {
          id: readInt(r.id),
          issuedBefore: readInt(r.issued_before),
          createTime: readInt(r.create_time),
          expireTime: readInt(r.expire_time),
        };
        if (r.subject !== null) row.subject = r.subject;
        return row;
      });
    },

    async version() {
      const r = await db
        .selectFrom("token_revocations")
        .select([sql<bigint | number>`count(*)`.as("rows"), sql<bigint | number | null>`max(id)`.as("top")])
        .executeTakeFirstOrThrow();
      return `${Number(r.rows)}:${r.top === null ? 0 : Number(r.top)}`;
    },

    async prune(now) {
      const result = await db
        .deleteFrom("token_revocations")
        .where(sql<SqlBool>`expire_time <= ${now}`)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
