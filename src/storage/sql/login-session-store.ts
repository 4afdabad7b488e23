import { type SqlBool, sql } from "kysely";
import { alreadyExists } from "../../core/errors.js";
import type { LoginSessionStore } from "../auth-store.js";
import { readInt } from "./dialect.js";
import { guardWrite, type SqlContext } from "./sql-context.js";

/**
 * LoginSessionStore over `login_sessions`; see `LoginSessionStore` in auth-store.ts. `take` is one
 * DELETE … RETURNING, so of two concurrent takers exactly one gets the row.
 */
export function createLoginSessionStore(ctx: SqlContext): LoginSessionStore {
  const { db } = ctx;
  return {
    async put(row) {
      await guardWrite(
        ctx,
        () =>
          db
            .insertInto("login_sessions")
            .values({ id: row.id, kind: row.kind, data: row.data, expire_time: row.expireTime })
            .execute(),
        { unique: () => alreadyExists("login session", row.kind, "login session already exists") },
      );
    },

    async take(id, kind, now) {
      const taken = await db
        .deleteFrom("login_sessions")
        .where("id", "=", id)
        .where("kind", "=", kind)
        .returning(["data", "expire_time"])
        .executeTakeFirst();
      if (!taken || readInt(taken.expire_time) <= now) return undefined;
      return taken.data;
    },

    async purgeExpired(now) {
      const result = await db
        .deleteFrom("login_sessions")
        .where(sql<SqlBool>`expire_time <= ${now}`)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
