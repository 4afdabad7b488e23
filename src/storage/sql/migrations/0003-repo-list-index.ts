import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * A covering index for repo lists in uid order (the default order, and the order of every
 * `descendants_of` / authorization-subtree scan): the columns a list page returns (`readme` is not
 * one of them) plus parent_uid (the `children_of` / `in_root` filters), so a page is read from the
 * index alone instead of one table lookup per row. PostgreSQL keeps the key to uid and carries the
 * rest as INCLUDE columns; SQLite has no INCLUDE and takes them as trailing key columns, which
 * orders the same because uid is unique.
 */
export function repoListIndexMigration(dialect: DialectName): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      if (dialect === "postgres") {
        await sql`create index repos_list_uid_idx on repos (uid) include (parent_uid, name, description, create_time, update_time)`.execute(
          db,
        );
      } else {
        await sql`create index repos_list_uid_idx on repos (uid, parent_uid, name, description, create_time, update_time)`.execute(
          db,
        );
      }
    },
  };
}
