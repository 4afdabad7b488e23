import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * The rest of IAM: identity providers (with their OIDC client secret, which only the login flow
 * reads), account associations (uid = the group's uid), group invites (only a SHA-256 hash of the
 * code), external group role mappings (under their identity provider, gone with it) and terms
 * acceptances (one per group and document).
 *
 * Text keys are `COLLATE "C"` on PostgreSQL, as in 0001, so subtree ranges compare bytes.
 */
export function iamFederationMigration(dialect: DialectName): Migration {
  const pg = dialect === "postgres";
  const key = pg ? sql`text collate "C"` : sql`text`;
  const bool = pg ? sql`boolean` : sql`integer`;

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("identity_providers")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("name", key, (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("default_role", key, (c) => c.notNull())
        .addColumn("issuer", "text", (c) => c.notNull())
        .addColumn("client_id", "text", (c) => c.notNull())
        .addColumn("client_secret", "text", (c) => c.notNull())
        .addColumn("additional_scopes", "text", (c) => c.notNull())
        .addColumn("groups_claim", "text", (c) => c.notNull())
        .addColumn("correlation_rule", "bigint", (c) => c.notNull())
        .addColumn("pkce_enabled", bool, (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .addUniqueConstraint("identity_providers_parent_name_key", ["parent_uid", "name"])
        .execute();
      await index(db, "identity_providers", ["default_role"]);
      await sortIndexes(db, "identity_providers", ["name", "create_time", "update_time"]);

      await db.schema
        .createTable("account_associations")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("name", key, (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("amazon", "text")
        .addColumn("google", "text")
        .addColumn("azure", "text")
        .addColumn("github", "text")
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .execute();
      await index(db, "account_associations", ["parent_uid", "uid"]);
      await sortIndexes(db, "account_associations", ["name", "create_time", "update_time"]);

      await db.schema
        .createTable("group_invites")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("role_uid", key, (c) => c.notNull())
        .addColumn("email", "text", (c) => c.notNull())
        .addColumn("code_hash", key, (c) => c.notNull().unique())
        .addColumn("key_id", key, (c) => c.notNull())
        .addColumn("single_use", bool, (c) => c.notNull())
        .addColumn("expiration_time", "bigint", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .execute();
      await index(db, "group_invites", ["parent_uid", "uid"]);
      await index(db, "group_invites", ["key_id"]);
      await sortIndexes(db, "group_invites", ["create_time"]);

      await db.schema
        .createTable("external_group_role_mappings")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) =>
          c.notNull().references("identity_providers.uid").onDelete("cascade"),
        )
        .addColumn("external_group_id", key, (c) => c.notNull())
        .addColumn("role_uid", key, (c) => c.notNull())
        .addColumn("scope", key, (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addUniqueConstraint("external_group_role_mappings_key", [
          "parent_uid",
          "external_group_id",
          "role_uid",
          "scope",
        ])
        .execute();
      await index(db, "external_group_role_mappings", ["role_uid"]);
      await sortIndexes(db, "external_group_role_mappings", ["create_time"]);

      await db.schema
        .createTable("terms_acceptances")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("doc_id", key, (c) => c.notNull())
        .addColumn("accepted_by", key, (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addUniqueConstraint("terms_acceptances_parent_doc_key", ["parent_uid", "doc_id"])
        .execute();
      await sortIndexes(db, "terms_acceptances", ["create_time"]);
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

/** Keyset-paging indexes: (column, uid) per sort column, and (parent_uid, column, uid). */
async function sortIndexes(db: Kysely<unknown>, table: string, columns: string[]): Promise<void> {
  for (const column of columns) {
    await index(db, table, [column, "uid"]);
    await index(db, table, ["parent_uid", column, "uid"]);
  }
}
