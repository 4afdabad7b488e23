import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * The library catalogue (ADR 0026): `library_artifacts`, one row per (ecosystem, name) with the
 * aggregate of its versions, and `library_versions` (an artifact's versions go with it). Indexes
 * serve the lists: artifacts of some ecosystems in name order (the default), the substring search
 * scanning that index, and an artifact's versions in rank (version) or publish order.
 * Text keys are `COLLATE "C"` on PostgreSQL so that names order by bytes as on SQLite.
 */
export function librariesMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  const bool = dialect === "postgres" ? sql`boolean` : sql`integer`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("library_artifacts")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("ecosystem", key, (c) => c.notNull())
        .addColumn("name", key, (c) => c.notNull())
        .addColumn("name_lower", key, (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("latest_version", "text", (c) => c.notNull())
        .addColumn("version_count", "bigint", (c) => c.notNull())
        .addColumn("remediated_count", "bigint", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .addUniqueConstraint("library_artifacts_ecosystem_name_key", ["ecosystem", "name"])
        .execute();
      await db.schema
        .createIndex("library_artifacts_name_idx")
        .on("library_artifacts")
        .columns(["name", "uid"])
        .execute();

      await db.schema
        .createTable("library_versions")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("artifact_uid", key, (c) =>
          c.notNull().references("library_artifacts.uid").onDelete("cascade"),
        )
        .addColumn("version", "text", (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("publish_time", "bigint", (c) => c.notNull())
        .addColumn("size_bytes", "bigint", (c) => c.notNull())
        .addColumn("remediated", bool, (c) => c.notNull())
        .addColumn("cuda_version", "text", (c) => c.notNull())
        .addColumn("version_rank", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("library_versions_rank_idx")
        .on("library_versions")
        .columns(["artifact_uid", "version_rank", "uid"])
        .execute();
      await db.schema
        .createIndex("library_versions_publish_idx")
        .on("library_versions")
        .columns(["artifact_uid", "publish_time", "uid"])
        .execute();
    },
  };
}
