import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * End-of-life data (ADR 0031): `eol_cycles`, the release cycles of a product as imported from
 * endoflife.date (`wharf import eol`), and `eol_rules`, which map an organization's repo and tag
 * glob to a product. Dates are ms at 00:00 UTC of the day, NULL when the data has none.
 * `like_pattern` is the glob as a LIKE pattern (PostgreSQL matches with it, SQLite with GLOB).
 * Text keys are `COLLATE "C"` on PostgreSQL so that uid ranges compare bytes as on SQLite.
 */
export function eolMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  const bool = dialect === "postgres" ? sql`boolean` : sql`integer`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("eol_cycles")
        .addColumn("product", key, (c) => c.notNull())
        .addColumn("cycle", key, (c) => c.notNull())
        .addColumn("codename", "text", (c) => c.notNull())
        .addColumn("release_date", "bigint")
        .addColumn("eol_date", "bigint")
        .addColumn("eol_undated", bool, (c) => c.notNull())
        .addColumn("lts", bool, (c) => c.notNull())
        .addColumn("lts_from", "bigint")
        .addColumn("latest_version", "text", (c) => c.notNull())
        .addColumn("latest_release_date", "bigint")
        .addColumn("support_end_date", "bigint")
        .addColumn("extended_support_end_date", "bigint")
        .addPrimaryKeyConstraint("eol_cycles_pkey", ["product", "cycle"])
        .execute();

      await db.schema
        .createTable("eol_rules")
        .addColumn("org_uid", key, (c) => c.notNull())
        .addColumn("repo_name", key, (c) => c.notNull())
        .addColumn("tag_glob", key, (c) => c.notNull())
        .addColumn("like_pattern", key, (c) => c.notNull())
        .addColumn("product", key, (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("eol_rules_pkey", ["org_uid", "repo_name", "tag_glob"])
        .execute();
      // Rules are looked up by the name of the repo a tag is in.
      await db.schema.createIndex("eol_rules_repo_name_idx").on("eol_rules").columns(["repo_name"]).execute();
    },
  };
}
