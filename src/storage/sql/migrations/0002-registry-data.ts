import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * The OCI data plane's metadata: `blobs` (committed content), `repo_blobs` (which repo may serve
 * which blob), `manifests` (bytes kept in the database), `manifest_references` (what each manifest
 * points at, for garbage collection and reachability) and `uploads` (open upload sessions).
 * Everything of a repo goes with the repo (FK cascade); `blobs` rows go only through GC.
 */
export function registryDataMigration(dialect: DialectName): Migration {
  const pg = dialect === "postgres";
  const key = pg ? sql`text collate "C"` : sql`text`;
  const bytes = pg ? sql`bytea` : sql`blob`;

  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("blobs")
        .addColumn("digest", key, (c) => c.primaryKey())
        .addColumn("size", "bigint", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .execute();

      await db.schema
        .createTable("repo_blobs")
        .addColumn("repo_uid", key, (c) => c.notNull().references("repos.uid").onDelete("cascade"))
        .addColumn("digest", key, (c) => c.notNull().references("blobs.digest").onDelete("cascade"))
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("repo_blobs_pkey", ["repo_uid", "digest"])
        .execute();
      await db.schema.createIndex("repo_blobs_digest_idx").on("repo_blobs").column("digest").execute();

      await db.schema
        .createTable("manifests")
        .addColumn("repo_uid", key, (c) => c.notNull().references("repos.uid").onDelete("cascade"))
        .addColumn("digest", key, (c) => c.notNull())
        .addColumn("media_type", "text", (c) => c.notNull())
        .addColumn("content", bytes, (c) => c.notNull())
        .addColumn("size", "bigint", (c) => c.notNull())
        .addColumn("subject_digest", key)
        .addColumn("artifact_type", "text")
        .addColumn("annotations", "text")
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addPrimaryKeyConstraint("manifests_pkey", ["repo_uid", "digest"])
        .execute();
      await db.schema
        .createIndex("manifests_repo_uid_subject_digest_idx")
        .on("manifests")
        .columns(["repo_uid", "subject_digest"])
        .execute();

      await db.schema
        .createTable("manifest_references")
        .addColumn("repo_uid", key, (c) => c.notNull())
        .addColumn("manifest_digest", key, (c) => c.notNull())
        .addColumn("digest", key, (c) => c.notNull())
        .addColumn("kind", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("manifest_references_pkey", ["repo_uid", "manifest_digest", "digest"])
        .addForeignKeyConstraint(
          "manifest_references_manifest_fkey",
          ["repo_uid", "manifest_digest"],
          "manifests",
          ["repo_uid", "digest"],
          (fk) => fk.onDelete("cascade"),
        )
        .execute();
      await db.schema
        .createIndex("manifest_references_repo_uid_digest_idx")
        .on("manifest_references")
        .columns(["repo_uid", "digest"])
        .execute();
      await db.schema
        .createIndex("manifest_references_digest_idx")
        .on("manifest_references")
        .column("digest")
        .execute();

      // Garbage collection asks "does any history row name this digest?".
      await db.schema
        .createIndex("tag_history_repo_uid_digest_idx")
        .on("tag_history")
        .columns(["repo_uid", "digest"])
        .execute();

      await db.schema
        .createTable("uploads")
        .addColumn("id", key, (c) => c.primaryKey())
        .addColumn("repo_uid", key, (c) => c.notNull().references("repos.uid").onDelete("cascade"))
        .addColumn("identity_uid", key, (c) => c.notNull())
        .addColumn("size", "bigint", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("uploads_update_time_idx").on("uploads").column("update_time").execute();
    },
  };
}
