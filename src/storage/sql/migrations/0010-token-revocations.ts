import type { Kysely, Migration } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * `token_revocations`: withdrawn issuer tokens (ADR 0018). A row revokes every token whose `iat`
 * (in ms) is before `issued_before`, of `subject` only, or of every subject when `subject` is
 * NULL. `expire_time` is when no token (or refresh token) the row could match is accepted any
 * more, so the row may be deleted. Every server polls `count(*)`/`max(id)` and keeps the live rows
 * in memory; `id` only grows, and the count catches rows whose ids committed out of order.
 */
export function tokenRevocationsMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("token_revocations")
        .addColumn("id", dialect === "postgres" ? "bigserial" : "integer", (c) =>
          dialect === "postgres" ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn("subject", "text")
        .addColumn("issued_before", "bigint", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("expire_time", "bigint", (c) => c.notNull())
        .execute();
    },
  };
}
