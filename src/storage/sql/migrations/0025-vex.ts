import { type Kysely, type Migration, sql } from "kysely";
import type { DialectName } from "../dialect.js";

/**
 * OpenVEX documents of image digests (ADR 0059):
 * - `vex_documents`: one row per stored document, `<repo uid>/<16 hex>`, for (repo, digest): its
 *   OpenVEX `@id`, author, issue time, how it arrived (`upload` or `referrer`, with the referrer
 *   manifest's digest), the sha256 of its bytes, and its statement counts. Goes with its repo.
 * - `vex_statements`: the document's statements in document order, one row each, with the
 *   vulnerability name, its aliases (JSON array), status, justification, impact and action
 *   statements, the effective time (the statement's timestamp, else the document's), whether a
 *   product names this image (`applies`), and that product's subcomponent purls (JSON array;
 *   empty: the whole image).
 */
export function vexMigration(dialect: DialectName): Migration {
  const key = dialect === "postgres" ? sql`text collate "C"` : sql`text`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable("vex_documents")
        .addColumn("uid", key, (c) => c.primaryKey())
        .addColumn("repo_uid", key, (c) => c.notNull().references("repos.uid").onDelete("cascade"))
        .addColumn("digest", key, (c) => c.notNull())
        .addColumn("document_id", "text", (c) => c.notNull())
        .addColumn("author", "text", (c) => c.notNull())
        .addColumn("issue_time", "bigint", (c) => c.notNull())
        .addColumn("source", "text", (c) => c.notNull())
        .addColumn("referrer", "text", (c) => c.notNull())
        .addColumn("content_digest", "text", (c) => c.notNull())
        .addColumn("statement_count", "bigint", (c) => c.notNull())
        .addColumn("applied_count", "bigint", (c) => c.notNull())
        .addColumn("create_time", "bigint", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("vex_documents_digest_idx")
        .on("vex_documents")
        .columns(["digest", "repo_uid"])
        .execute();

      await db.schema
        .createTable("vex_statements")
        .addColumn("document_uid", key, (c) =>
          c.notNull().references("vex_documents.uid").onDelete("cascade"),
        )
        .addColumn("ordinal", "bigint", (c) => c.notNull())
        .addColumn("repo_uid", key, (c) => c.notNull())
        .addColumn("digest", key, (c) => c.notNull())
        .addColumn("vulnerability", "text", (c) => c.notNull())
        .addColumn("aliases", "text", (c) => c.notNull())
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("justification", "text", (c) => c.notNull())
        .addColumn("impact_statement", "text", (c) => c.notNull())
        .addColumn("action_statement", "text", (c) => c.notNull())
        .addColumn("effective_time", "bigint", (c) => c.notNull())
        .addColumn("applies", "integer", (c) => c.notNull())
        .addColumn("subcomponents", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("vex_statements_pkey", ["document_uid", "ordinal"])
        .execute();
      await db.schema
        .createIndex("vex_statements_digest_idx")
        .on("vex_statements")
        .columns(["digest", "repo_uid"])
        .execute();
    },
  };
}
