import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * `refresh_tokens`: the STS's rotating refresh tokens, keyed by the SHA-256 of the token (the token
 * itself is never stored), grouped in families (`family_uid`) so a replayed token can revoke every
 * token rotated from the same first one. Rows go with their identity (FK cascade).
 */
export function refreshTokensMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("refresh_tokens")
        .addColumn("token_hash", key, (c) => c.primaryKey())
        .addColumn("family_uid", key, (c) => c.notNull())
        .addColumn("identity_uid", key, (c) => c.notNull().references("identities.uid").onDelete("cascade"))
        .addColumn("audience", "text", (c) => c.notNull())
        .addColumn("scopes", "text")
        .addColumn("caps", "text")
        .addColumn("act", "text")
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("expire_time", "bigint", (c) => c.notNull())
        .addColumn("spent_time", "bigint")
        .execute();
      for (const column of ["family_uid", "identity_uid", "expire_time"]) {
        await db.schema
          .createIndex(`refresh_tokens_${column}_idx`)
          .on("refresh_tokens")
          .column(column)
          .execute();
      }
    },
  };
}
