import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * The initial schema: every table of `schema.ts` with its keys and indexes.
 *
 * On PostgreSQL every text key is `COLLATE "C"` so that ordering and the subtree range predicates
 * (`uid > 'X/' AND uid < 'X0'`) compare bytes exactly as SQLite's BINARY collation does.
 */
export function initialMigration(dialect: DialectName): Migration {
  const pg = dialect === "postgres";
  const key = pg ? sql`text collate "C"` : sql`text`;
  const bool = pg ? sql`boolean` : sql`integer`;

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("groups")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("name", key, (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("verified", bool, (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .addUniqueConstraint("groups_parent_name_key", ["parent_uid", "name"])
        .execute();
      await sortIndexes(db, "groups");

      await db.schema
        .createTable("identities")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("name", key, (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("email", "text", (c) => c.notNull())
        .addColumn("issuer", key)
        .addColumn("subject", key)
        .addColumn("claim_match", "text")
        .addColumn("static_keys", "text")
        .addColumn("last_seen_time", "bigint")
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .execute();
      await index(db, "identities", ["parent_uid", "name"]);
      await index(db, "identities", ["issuer", "subject"]);
      await sortIndexes(db, "identities");

      await db.schema
        .createTable("roles")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("name", key, (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("capabilities", "text", (c) => c.notNull())
        .addColumn("built_in", bool, (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .execute();
      await index(db, "roles", ["parent_uid", "name"]);
      await index(db, "roles", ["name", "uid"]);

      await db.schema
        .createTable("role_bindings")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("identity_uid", key, (c) => c.notNull())
        .addColumn("role_uid", key, (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .addUniqueConstraint("role_bindings_group_identity_role_key", [
          "parent_uid",
          "identity_uid",
          "role_uid",
        ])
        .execute();
      await index(db, "role_bindings", ["parent_uid", "uid"]);
      await index(db, "role_bindings", ["identity_uid"]);
      await index(db, "role_bindings", ["role_uid"]);

      await db.schema
        .createTable("repos")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("name", key, (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("readme", "text", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .addUniqueConstraint("repos_parent_name_key", ["parent_uid", "name"])
        .execute();
      await sortIndexes(db, "repos");

      await db.schema
        .createTable("tags")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull().references("repos.uid").onDelete("cascade"))
        .addColumn("name", key, (c) => c.notNull())
        .addColumn("digest", key, (c) => c.notNull())
        .addColumn("deprecated", bool, (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .addUniqueConstraint("tags_parent_name_key", ["parent_uid", "name"])
        .execute();
      await index(db, "tags", ["digest"]);
      await sortIndexes(db, "tags");

      await db.schema
        .createTable("tag_history")
        .addColumn("id", pg ? "bigint" : "integer", (c) =>
          pg ? c.primaryKey().generatedAlwaysAsIdentity() : c.primaryKey(),
        )
        .addColumn("repo_uid", key, (c) => c.notNull().references("repos.uid").onDelete("cascade"))
        .addColumn("tag_name", key, (c) => c.notNull())
        .addColumn("digest", key, (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .execute();
      await index(db, "tag_history", ["repo_uid", "tag_name", "update_time", "id"]);

      await db.schema
        .createTable("signing_keys")
        .addColumn("kid", key, (c) => c.primaryKey())
        .addColumn("private_jwk", "text", (c) => c.notNull())
        .addColumn("public_jwk", "text", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("retire_time", "bigint")
        .execute();

      await db.schema
        .createTable("settings")
        .addColumn("key", key, (c) => c.primaryKey())
        .addColumn("value", "text", (c) => c.notNull())
        .execute();
    },
  };
}

async function index(db: Kysely<unknown>, table: string, columns: string[]): Promise<void> {
  await db.schema
    .createIndex(`${table}_${columns.join("_")}_idx`)
    .on(table)
    .columns(columns)
    .execute();
}

/**
 * The keyset-paging indexes of a listable table: (column, uid) for each sort column, and the same
 * behind parent_uid so `childrenOf`/`inRoot` lists walk an index in order instead of sorting all
 * children. (parent_uid, name) comes from the table's unique constraint or `index` where there is none.
 */
async function sortIndexes(db: Kysely<unknown>, table: string): Promise<void> {
  for (const column of ["name", "create_time", "update_time"]) await index(db, table, [column, "uid"]);
  for (const column of ["uid", "create_time", "update_time"]) {
    await index(db, table, column === "uid" ? ["parent_uid", "uid"] : ["parent_uid", column, "uid"]);
  }
}
