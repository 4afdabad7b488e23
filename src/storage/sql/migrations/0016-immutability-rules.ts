import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * Immutable tags and tag restore (ADR 0045):
 * - `immutability_rules`: an organization's, folder's or repo's rules (`parent_uid`, no foreign key
 *   since the parent is a group or a repo; deleting either deletes its rules). `tag_patterns` is a
 *   JSON array of globs. A push looks the rules of a repo's ancestors up by `parent_uid` in one
 *   indexed query.
 * - `tag_history.tag_uid`: the deleted tag's uid on a delete record (NULL on every other record),
 *   so a deleted tag's uid still names its history for `:restore`. Partial index: only delete
 *   records carry it, and pushes (which append the other records) pay nothing for it.
 * Text keys are `COLLATE "C"` on PostgreSQL so that uid ranges compare bytes as on SQLite.
 */
export function immutabilityRulesMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("immutability_rules")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("tag_patterns", "text", (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .execute();
      for (const columns of [
        ["parent_uid", "uid"],
        ["parent_uid", "create_time", "uid"],
        ["parent_uid", "update_time", "uid"],
        ["create_time", "uid"],
        ["update_time", "uid"],
      ]) {
        await db.schema
          .createIndex(`immutability_rules_${columns.join("_")}_idx`)
          .on("immutability_rules")
          .columns(columns)
          .execute();
      }

      await db.schema.alterTable("tag_history").addColumn("tag_uid", key).execute();
      await sql`create index tag_history_tag_uid_idx on tag_history (tag_uid) where tag_uid is not null`.execute(
        db,
      );
    },
  };
}
