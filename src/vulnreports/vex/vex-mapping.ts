import { create } from "@bufbuild/protobuf";
import { toTimestamp } from "../../core/api-convert.js";
import { type VexStatement, VexStatementSchema } from "../../gen/platform/registry/v1/registry_pb.js";
import { type VexDocument, VexDocumentSchema } from "../../gen/platform/registry/v1/vex_pb.js";
import type { VexDocumentRow, VexStatementRow } from "../../storage/vex-store.js";

/** The API shape of a stored VEX document. */
export function vexDocumentMessage(row: VexDocumentRow): VexDocument {
  return create(VexDocumentSchema, {
    id: row.uid,
    repoId: row.repoUid,
    digest: row.digest,
    documentId: row.documentId,
    author: row.author,
    issuedAt: toTimestamp(row.issueTime),
    source: row.source,
    referrer: row.referrer,
    statementCount: BigInt(row.statementCount),
    appliedCount: BigInt(row.appliedCount),
    createdAt: toTimestamp(row.createTime),
  });
}

/** The API shape of the statement deciding a match. */
export function vexStatementMessage(s: VexStatementRow): VexStatement {
  return create(VexStatementSchema, {
    status: s.status,
    justification: s.justification,
    impactStatement: s.impactStatement,
    actionStatement: s.actionStatement,
    document: s.documentUid,
    timestamp: toTimestamp(s.effectiveTime),
  });
}
