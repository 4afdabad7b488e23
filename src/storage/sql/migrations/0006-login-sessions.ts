import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * `login_sessions`: the browser login flow's short-lived state — pending authorizations (keyed by
 * the hash of the `state` sent to the identity provider) and one-time codes handed to the CLI
 * (keyed by the hash of the code). Rows are taken (deleted) once and purged when expired.
 */
export function loginSessionsMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("login_sessions")
        .addColumn("id", key, (c) => c.primaryKey())
        .addColumn("kind", key, (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .addColumn("expire_time", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("login_sessions_expire_time_idx")
        .on("login_sessions")
        .column("expire_time")
        .execute();
    },
  };
}
