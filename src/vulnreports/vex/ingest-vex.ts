import { createHash } from "node:crypto";
import { invalidArgument, notFound } from "../../core/errors.js";
import { newChildUid } from "../../core/uidp.js";
import type { ChangeContext } from "../../events/event-recorder.js";
import { recordedMutation } from "../../events/recorded-mutation.js";
import { VexDocumentSchema } from "../../gen/platform/registry/v1/vex_pb.js";
import { validateDigest } from "../../registry/names.js";
import type { Store } from "../../storage/store.js";
import type { VexDocumentRow, VexSource } from "../../storage/vex-store.js";
import type { VulnReportServiceDeps } from "../service-deps.js";
import { statementRecords } from "./applicability.js";
import { DEFAULT_VEX_MAX_BYTES, parseOpenVex, VexFormatError } from "./openvex.js";
import { vexDocumentMessage } from "./vex-mapping.js";

/** What a VEX document is stored from. */
export interface VexInput {
  repoUid: string;
  /** The image the document is about (a manifest the repo holds). */
  digest: string;
  /** The document's bytes (bare OpenVEX, in-toto statement or DSSE envelope). */
  bytes: Uint8Array;
  source: VexSource;
  /** The referrer manifest's digest for `source: "referrer"`. */
  referrer?: string;
}

/**
 * Stores an OpenVEX document about image `digest` in repo `repoUid` with all its statements (those
 * naming another image are kept but never apply), and records a `registry.vex.created` event in the
 * same transaction. NOT_FOUND when the repo or the manifest is missing; INVALID_ARGUMENT on
 * `document` for a document that is not OpenVEX Wharf reads or is larger than
 * `maxBytes` (nothing is stored).
 */
export async function ingestVexDocument(
  deps: Pick<VulnReportServiceDeps, "store" | "events">,
  ctx: ChangeContext,
  input: VexInput,
  maxBytes = DEFAULT_VEX_MAX_BYTES,
): Promise<VexDocumentRow> {
  const { repoUid, digest } = input;
  validateDigest(digest);
  if (!(await deps.store.repos.get(repoUid))) throw notFound("repo", repoUid);
  if (!(await deps.store.manifests.has(repoUid, digest))) throw notFound("manifest", digest);
  let doc: ReturnType<typeof parseOpenVex>;
  try {
    doc = parseOpenVex(input.bytes, maxBytes);
  } catch (err) {
    if (err instanceof VexFormatError) throw invalidArgument("document", err.message);
    throw err;
  }
  const statements = statementRecords(doc, digest);
  const row: VexDocumentRow = {
    uid: newChildUid(repoUid),
    repoUid,
    digest,
    documentId: doc.id,
    author: doc.author,
    issueTime: doc.issueTime,
    source: input.source,
    referrer: input.referrer ?? "",
    contentDigest: `sha256:${createHash("sha256").update(input.bytes).digest("hex")}`,
    statementCount: statements.length,
    appliedCount: statements.filter((s) => s.applies).length,
    createTime: ctx.clock.now(),
  };
  return recordedMutation(
    deps,
    ctx,
    (tx: Store) => tx.vex.insert(row, statements),
    (stored) => ({
      resource: "vex",
      verb: "created",
      subject: stored.uid,
      group: repoUid,
      schema: VexDocumentSchema,
      body: vexDocumentMessage(stored),
    }),
  );
}
