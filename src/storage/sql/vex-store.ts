import type { Selectable } from "kysely";
import { notFound } from "../../core/errors.js";
import { parentOf } from "../../core/uidp.js";
import {
  imageKey,
  type VexDocumentRow,
  type VexSource,
  type VexStatementRow,
  type VexStore,
} from "../vex-store.js";
import { readInt } from "./dialect.js";
import { isIn } from "./predicates.js";
import type { VexDocumentsTable } from "./schema.js";
import { guardWrite, type SqlContext } from "./sql-context.js";

/** Rows per multi-row INSERT of statements (13 columns each stays under SQLite's 32766 parameters). */
const STATEMENT_BATCH = 500;

function toDocumentRow(r: Selectable<VexDocumentsTable>): VexDocumentRow {
  return {
    uid: r.uid,
    repoUid: r.repo_uid,
    digest: r.digest,
    documentId: r.document_id,
    author: r.author,
    issueTime: readInt(r.issue_time),
    source: r.source as VexSource,
    referrer: r.referrer,
    contentDigest: r.content_digest,
    statementCount: readInt(r.statement_count),
    appliedCount: readInt(r.applied_count),
    createTime: readInt(r.create_time),
  };
}

/** VexStore over `vex_documents` and `vex_statements` (migration 0025); see vex-store.ts. */
export function createVexStore(ctx: SqlContext): VexStore {
  const { db } = ctx;
  return {
    insert(row, statements) {
      if (parentOf(row.uid) !== row.repoUid)
        throw new Error(`store: "${row.repoUid}" is not the parent of "${row.uid}"`);
      return ctx.transaction(async (tx) => {
        // Caches of decisions that read suppressions (pull policies) drop their entries on this batch.
        tx.changed("vex_statements");
        await guardWrite(
          tx,
          () =>
            tx.db
              .insertInto("vex_documents")
              .values({
                uid: row.uid,
                repo_uid: row.repoUid,
                digest: row.digest,
                document_id: row.documentId,
                author: row.author,
                issue_time: row.issueTime,
                source: row.source,
                referrer: row.referrer,
                content_digest: row.contentDigest,
                statement_count: statements.length,
                applied_count: statements.filter((s) => s.applies).length,
                create_time: row.createTime,
              })
              .execute(),
          { foreignKey: () => notFound("repo", row.repoUid) },
        );
        for (let i = 0; i < statements.length; i += STATEMENT_BATCH) {
          await tx.db
            .insertInto("vex_statements")
            .values(
              statements.slice(i, i + STATEMENT_BATCH).map((s, j) => ({
                document_uid: row.uid,
                ordinal: i + j,
                repo_uid: row.repoUid,
                digest: row.digest,
                vulnerability: s.vulnerability,
                aliases: JSON.stringify(s.aliases),
                status: s.status,
                justification: s.justification,
                impact_statement: s.impactStatement,
                action_statement: s.actionStatement,
                effective_time: s.effectiveTime,
                applies: s.applies ? 1 : 0,
                subcomponents: JSON.stringify(s.subcomponents),
              })),
            )
            .execute();
        }
        return {
          ...row,
          statementCount: statements.length,
          appliedCount: statements.filter((s) => s.applies).length,
        };
      });
    },

    async documents(repoUid, digest) {
      const rows = await db
        .selectFrom("vex_documents")
        .selectAll()
        .where("digest", "=", digest)
        .where("repo_uid", "=", repoUid)
        .orderBy("create_time")
        .orderBy("uid")
        .execute();
      return rows.map(toDocumentRow);
    },

    async applicable(images) {
      const out = new Map<string, VexStatementRow[]>();
      if (images.length === 0) return out;
      const wanted = new Set(images.map((i) => imageKey(i.repoUid, i.digest)));
      const rows = await db
        .selectFrom("vex_statements as s")
        .innerJoin("vex_documents as d", "d.uid", "s.document_uid")
        .select([
          "s.document_uid",
          "s.ordinal",
          "s.repo_uid",
          "s.digest",
          "s.vulnerability",
          "s.aliases",
          "s.status",
          "s.justification",
          "s.impact_statement",
          "s.action_statement",
          "s.effective_time",
          "s.subcomponents",
          "d.create_time",
        ])
        .where(isIn([...new Set(images.map((i) => i.digest))], "s.digest"))
        .where(isIn([...new Set(images.map((i) => i.repoUid))], "s.repo_uid"))
        .where("s.applies", "=", 1)
        .orderBy("d.create_time")
        .orderBy("s.document_uid")
        .orderBy("s.ordinal")
        .execute();
      for (const r of rows) {
        const key = imageKey(r.repo_uid, r.digest);
        if (!wanted.has(key)) continue;
        const list = out.get(key) ?? [];
        out.set(key, list);
        list.push({
          documentUid: r.document_uid,
          ordinal: readInt(r.ordinal),
          repoUid: r.repo_uid,
          digest: r.digest,
          vulnerability: r.vulnerability,
          aliases: JSON.parse(r.aliases),
          status: r.status,
          justification: r.justification,
          impactStatement: r.impact_statement,
          actionStatement: r.action_statement,
          effectiveTime: readInt(r.effective_time),
          applies: true,
          subcomponents: JSON.parse(r.subcomponents),
          createTime: readInt(r.create_time),
        });
      }
      return out;
    },
  };
}
