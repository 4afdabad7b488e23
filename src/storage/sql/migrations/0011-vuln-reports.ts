import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * Vulnerability reports per image digest (ADR 0024):
 * - `vuln_reports`: one row per stored report, `<repo uid>/<16 hex>`, for (repo, digest, scanner).
 *   The newest report of a (repo, digest, scanner) has `superseded_time` NULL (the current one; a
 *   partial unique index keeps it single); older ones are its history. `raw_digest` names the
 *   original bytes in blob storage (a `blobs` row, which garbage collection keeps while a report
 *   names it). Reports go with their repo.
 * - `vuln_matches`: the normalised (vulnerability, package) rows of a report, in report order; list
 *   columns hold JSON arrays of strings (cvss: of objects).
 */
export function vulnReportsMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("vuln_reports")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("repo_uid", key, (c) => c.notNull().references("repos.uid").onDelete("cascade"))
        .addColumn("digest", key, (c) => c.notNull())
        .addColumn("scanner", "text", (c) => c.notNull())
        .addColumn("scanner_version", "text", (c) => c.notNull())
        .addColumn("db_build_time", "bigint")
        .addColumn("envelope", "text", (c) => c.notNull())
        .addColumn("raw_digest", key, (c) => c.notNull())
        .addColumn("raw_size", "bigint", (c) => c.notNull())
        .addColumn("match_count", "bigint", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .addColumn("superseded_time", "bigint")
        .execute();
      await db.schema
        .createIndex("vuln_reports_current_idx")
        .on("vuln_reports")
        .columns(["repo_uid", "digest", "scanner"])
        .unique()
        .where(sql.ref("superseded_time"), "is", null)
        .execute();
      await db.schema
        .createIndex("vuln_reports_digest_idx")
        .on("vuln_reports")
        .columns(["digest", "create_time"])
        .execute();
      // Garbage collection asks "does any report name this blob?".
      await db.schema
        .createIndex("vuln_reports_raw_digest_idx")
        .on("vuln_reports")
        .column("raw_digest")
        .execute();

      await db.schema
        .createTable("vuln_matches")
        .addColumn("report_uid", key, (c) => c.notNull().references("vuln_reports.uid").onDelete("cascade"))
        .addColumn("ordinal", "bigint", (c) => c.notNull())
        .addColumn("vulnerability_id", "text", (c) => c.notNull())
        .addColumn("aliases", "text", (c) => c.notNull())
        .addColumn("severity", "text", (c) => c.notNull())
        .addColumn("cvss", "text", (c) => c.notNull())
        .addColumn("description", "text", (c) => c.notNull())
        .addColumn("related_urls", "text", (c) => c.notNull())
        .addColumn("fix_versions", "text", (c) => c.notNull())
        .addColumn("fix_state", "text", (c) => c.notNull())
        .addColumn("package_name", "text", (c) => c.notNull())
        .addColumn("package_version", "text", (c) => c.notNull())
        .addColumn("package_type", "text", (c) => c.notNull())
        .addColumn("purl", "text", (c) => c.notNull())
        .addColumn("locations", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("vuln_matches_pkey", ["report_uid", "ordinal"])
        .execute();
    },
  };
}
