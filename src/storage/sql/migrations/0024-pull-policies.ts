import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * Pull policies (ADR 0058): `pull_policies`, one row per policy of an organization, folder or repo
 * (`parent_uid`, no foreign key since the parent is a group or a repo; deleting either deletes its
 * policies). Names are unique per parent. `deny_severity` is "" when the rule is off;
 * `exempt_identities` is a JSON array of identity uids. The evaluator reads the whole table (small:
 * a few per organization) and follows the change feed, so pulls never query it.
 * Text keys are `COLLATE "C"` on PostgreSQL so that uid ranges compare bytes as on SQLite.
 */
export function pullPoliciesMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  const bool = dialect === "postgres" ? sql`boolean` : sql`integer`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("pull_policies")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("name", key, (c) => c.notNull())
        .addColumn("mode", "text", (c) => c.notNull())
        .addColumn("require_signature", bool, (c) => c.notNull())
        .addColumn("deny_severity", "text", (c) => c.notNull())
        .addColumn("only_fixable", bool, (c) => c.notNull())
        .addColumn("deny_eol", bool, (c) => c.notNull())
        .addColumn("require_sbom", bool, (c) => c.notNull())
        .addColumn("exempt_identities", "text", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .addUniqueConstraint("pull_policies_parent_name_key", ["parent_uid", "name"])
        .execute();
      for (const columns of [
        ["parent_uid", "uid"],
        ["name", "uid"],
        ["create_time", "uid"],
        ["update_time", "uid"],
      ]) {
        await db.schema
          .createIndex(`pull_policies_${columns.join("_")}_idx`)
          .on("pull_policies")
          .columns(columns)
          .execute();
      }
    },
  };
}
