import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * Advisories and upstream vulnerability metadata (ADR 0025), global data imported by
 * `wharf import advisories|vulnmeta`:
 * - `advisories`: one row per (advisory id, artifact); `search` is the lower-cased artifact name,
 *   component name and aliases (for `query`), `latest_event_type` the type of the most recent
 *   approved event, `content_hash` what the row was last written from (re-imports of the same
 *   content write nothing).
 * - `advisory_aliases` (alias lookups), `advisory_events` (history; `position` orders it).
 * - `vuln_metadata` with its `vuln_metadata_references` and `vuln_metadata_severities`.
 * Every list filter has an index; the low-cardinality ones lead with the column and end with uid.
 */
export function advisoriesMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  const real = dialect === "postgres" ? "double precision" : "real";
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("advisories")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("advisory_id", key, (c) => c.notNull())
        .addColumn("legacy_advisory_id", key, (c) => c.notNull())
        .addColumn("author", "text", (c) => c.notNull())
        .addColumn("artifact_name", key, (c) => c.notNull())
        .addColumn("artifact_type", key, (c) => c.notNull())
        .addColumn("artifact_architecture", key, (c) => c.notNull())
        .addColumn("component_name", key, (c) => c.notNull())
        .addColumn("component_type", key, (c) => c.notNull())
        .addColumn("component_location", key, (c) => c.notNull())
        .addColumn("origin_package", key, (c) => c.notNull())
        .addColumn("package_namespace", "text", (c) => c.notNull())
        .addColumn("severities", "text", (c) => c.notNull())
        .addColumn("findings", "text", (c) => c.notNull())
        .addColumn("search", "text", (c) => c.notNull())
        .addColumn("latest_event_type", key, (c) => c.notNull())
        .addColumn("content_hash", "text", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .addColumn("delete_time", "bigint")
        // SQLite: the table is its uid b-tree, so a list in uid order that filters (query) reads
        // rows in order instead of looking each one up from the uid index.
        .$call((t) => (dialect === "sqlite" ? t.modifyEnd(sql`without rowid`) : t))
        .execute();
      for (const column of [
        "advisory_id",
        "legacy_advisory_id",
        "artifact_name",
        "artifact_type",
        "artifact_architecture",
        "component_name",
        "component_type",
        "component_location",
        "origin_package",
        "latest_event_type",
      ]) {
        await db.schema
          .createIndex(`advisories_${column}_idx`)
          .on("advisories")
          .columns([column, "uid"])
          .execute();
      }
      await db.schema
        .createIndex("advisories_create_time_idx")
        .on("advisories")
        .columns(["create_time", "uid"])
        .execute();
      await db.schema
        .createIndex("advisories_update_time_idx")
        .on("advisories")
        .columns(["update_time", "uid"])
        .execute();

      await db.schema
        .createTable("advisory_aliases")
        .addColumn("alias", key, (c) => c.notNull())
        .addColumn("advisory_uid", key, (c) => c.notNull().references("advisories.uid").onDelete("cascade"))
        .addPrimaryKeyConstraint("advisory_aliases_pk", ["alias", "advisory_uid"])
        .execute();
      await db.schema
        .createIndex("advisory_aliases_advisory_uid_idx")
        .on("advisory_aliases")
        .column("advisory_uid")
        .execute();

      await db.schema
        .createTable("advisory_events")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("advisory_uid", key, (c) => c.notNull().references("advisories.uid").onDelete("cascade"))
        .addColumn("position", "integer", (c) => c.notNull())
        .addColumn("time", "bigint", (c) => c.notNull())
        .addColumn("type", key, (c) => c.notNull())
        .addColumn("author", key, (c) => c.notNull())
        .addColumn("reviewer", key, (c) => c.notNull())
        .addColumn("review_state", key, (c) => c.notNull())
        .addColumn("issue", "text", (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("advisory_events_advisory_idx")
        .on("advisory_events")
        .columns(["advisory_uid", "position"])
        .execute();
      for (const column of ["type", "author", "reviewer", "review_state"]) {
        await db.schema
          .createIndex(`advisory_events_${column}_idx`)
          .on("advisory_events")
          .columns([column, "advisory_uid"])
          .execute();
      }

      await db.schema
        .createTable("vuln_metadata")
        .addColumn("id", key, (c) => c.primaryKey())
        .addColumn("summary", "text", (c) => c.notNull())
        .addColumn("details", "text", (c) => c.notNull())
        .addColumn("content_hash", "text", (c) => c.notNull())
        .addColumn("update_time", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("vuln_metadata_references")
        .addColumn("id", key, (c) => c.notNull().references("vuln_metadata.id").onDelete("cascade"))
        .addColumn("position", "integer", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("url", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("vuln_metadata_references_pk", ["id", "position"])
        .execute();
      await db.schema
        .createTable("vuln_metadata_severities")
        .addColumn("id", key, (c) => c.notNull().references("vuln_metadata.id").onDelete("cascade"))
        .addColumn("position", "integer", (c) => c.notNull())
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("vector", "text", (c) => c.notNull())
        .addColumn("base_score", real, (c) => c.notNull())
        .addColumn("level", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("vuln_metadata_severities_pk", ["id", "position"])
        .execute();
    },
  };
}
