import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * Upstreams of the pull-through cache (ADR 0051): `upstreams`, one row per upstream of an
 * organization, unique by (parent_uid, name), deleted with its organization (foreign key). The
 * password column holds the SecretBox's sealed form, never the password. The sealing key is a
 * `settings` row written on first use, so this migration adds no key.
 * Text keys are `COLLATE "C"` on PostgreSQL so that uid ranges compare bytes as on SQLite.
 */
export function upstreamsMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("upstreams")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull().references("groups.uid").onDelete("cascade"))
        .addColumn("name", key, (c) => c.notNull())
        .addColumn("url", "text", (c) => c.notNull())
        .addColumn("username", "text", (c) => c.notNull())
        .addColumn("password", "text", (c) => c.notNull())
        .addColumn("tag_ttl_ms", "bigint", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("upstreams_parent_uid_name_idx")
        .on("upstreams")
        .columns(["parent_uid", "name"])
        .unique()
        .execute();
      for (const columns of [
        ["parent_uid", "uid"],
        ["name", "uid"],
        ["create_time", "uid"],
        ["update_time", "uid"],
      ]) {
        await db.schema
          .createIndex(`upstreams_${columns.join("_")}_idx`)
          .on("upstreams")
          .columns(columns)
          .execute();
      }
    },
  };
}
