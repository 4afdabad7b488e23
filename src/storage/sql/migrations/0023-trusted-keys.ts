import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * Trusted signing keys (ADR 0056): `trusted_keys`, the public keys an organization, folder or repo
 * trusts to sign images (`parent_uid`, no foreign key since the parent is a group or a repo;
 * deleting either deletes its keys, as for immutability rules). Unique (parent_uid, name). The
 * signature verifier reads the keys of a repo's ancestors by `parent_uid` in one indexed query.
 * (Not `signing_keys`: that table holds the token issuer's own JWT keys.)
 * Text keys are `COLLATE "C"` on PostgreSQL so that uid ranges compare bytes as on SQLite.
 */
export function trustedKeysMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("trusted_keys")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("parent_uid", key, (c) => c.notNull())
        .addColumn("name", key, (c) => c.notNull())
        .addColumn("public_key_pem", "text", (c) => c.notNull())
        .addColumn("algorithm", "text", (c) => c.notNull())
        .addColumn("fingerprint", "text", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("trusted_keys_parent_uid_name_idx")
        .on("trusted_keys")
        .columns(["parent_uid", "name"])
        .unique()
        .execute();
      for (const columns of [
        ["parent_uid", "uid"],
        ["parent_uid", "create_time", "uid"],
        ["name", "uid"],
        ["create_time", "uid"],
      ]) {
        await db.schema
          .createIndex(`trusted_keys_${columns.join("_")}_idx`)
          .on("trusted_keys")
          .columns(columns)
          .execute();
      }
    },
  };
}
