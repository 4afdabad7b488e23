import type { Selectable } from "kysely";
import { type SqlBool, sql } from "kysely";
import { alreadyExists, notFound } from "../../core/errors.js";
import type { RefreshTokenRow, RefreshTokenStore } from "../refresh-token-store.js";
import { readInt, readOptionalInt } from "./dialect.js";
import type { RefreshTokensTable } from "./schema.js";
import { guardWrite, type SqlContext } from "./sql-context.js";

function toRow(r: Selectable<RefreshTokensTable>): RefreshTokenRow {
  const row: RefreshTokenRow = {
    tokenHash: r.token_hash,
    familyUid: r.family_uid,
    identityUid: r.identity_uid,
    audience: JSON.parse(r.audience) as string[],
    createTime: readInt(r.create_time),
    expireTime: readInt(r.expire_time),
  };
  if (r.scopes !== null) row.scopes = JSON.parse(r.scopes) as string[];
  if (r.caps !== null) row.caps = JSON.parse(r.caps) as string[];
  if (r.act !== null) row.act = JSON.parse(r.act) as Record<string, unknown>;
  const spent = readOptionalInt(r.spent_time);
  if (spent !== undefined) row.spentTime = spent;
  return row;
}

const json = (value: unknown) => (value === undefined ? null : JSON.stringify(value));

/**
 * RefreshTokenStore over `refresh_tokens`; see refresh-token-store.ts. `spend` is one conditional
 * UPDATE (`spent_time IS NULL`), so of two concurrent spenders exactly one sees a changed row.
 */
export function createRefreshTokenStore(ctx: SqlContext): RefreshTokenStore {
  const { db } = ctx;
  return {
    async insert(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("refresh_tokens")
            .values({
              token_hash: row.tokenHash,
              family_uid: row.familyUid,
              identity_uid: row.identityUid,
              audience: JSON.stringify(row.audience),
              scopes: json(row.scopes),
              caps: json(row.caps),
              act: json(row.act),
              create_time: row.createTime,
              expire_time: row.expireTime,
              spent_time: row.spentTime ?? null,
            })
            .execute(),
        {
          unique: () => alreadyExists("refresh token", row.tokenHash, "refresh token already exists"),
          foreignKey: () => notFound("identity", row.identityUid),
        },
      );
    },

    async get(tokenHash) {
      const r = await db
        .selectFrom("refresh_tokens")
        .selectAll()
        .where("token_hash", "=", tokenHash)
        .executeTakeFirst();
      return r && toRow(r);
    },

    async spend(tokenHash, now) {
      const result = await db
        .updateTable("refresh_tokens")
        .set({ spent_time: now })
        .where("token_hash", "=", tokenHash)
        .where("spent_time", "is", null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },

    async revokeFamily(familyUid) {
      const result = await db
        .deleteFrom("refresh_tokens")
        .where("family_uid", "=", familyUid)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async deleteExpired(now) {
      const result = await db
        .deleteFrom("refresh_tokens")
        .where(sql<SqlBool>`expire_time <= ${now}`)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },

    async markIdentitySeen(identityUid, now, minIntervalMs) {
      const result = await db
        .updateTable("identities")
        .set({ last_seen_time: now })
        .where("uid", "=", identityUid)
        .where(sql<SqlBool>`(last_seen_time is null or last_seen_time <= ${now - minIntervalMs})`)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
