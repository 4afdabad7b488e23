/**
 * Stored OpenVEX documents of image digests and their statements (ADR 0059). Conventions are those
 * of store.ts (times in ms since the epoch, undefined for missing rows).
 */

/** How a document reached Wharf. */
export type VexSource = "upload" | "referrer";

/** A stored OpenVEX document (its statements are read separately). */
export interface VexDocumentRow {
  /** `<repo uid>/<16 hex>`. */
  uid: string;
  repoUid: string;
  /** The image (manifest) digest the document was stored for. */
  digest: string;
  /** The document's OpenVEX `@id`. */
  documentId: string;
  author: string;
  /** The document's `timestamp` (when it was issued). */
  issueTime: number;
  source: VexSource;
  /** The referrer manifest's digest when `source` is `referrer`; "" for uploads. */
  referrer: string;
  /** sha256 of the document's bytes as received. */
  contentDigest: string;
  statementCount: number;
  /** How many statements name this image (see {@link VexStatementRecord.applies}). */
  appliedCount: number;
  createTime: number;
}

/** One statement of a document, as stored. */
export interface VexStatementRecord {
  /** The vulnerability's `name`. */
  vulnerability: string;
  aliases: string[];
  /** not_affected, affected, fixed or under_investigation. */
  status: string;
  /** "" when the statement gives none. */
  justification: string;
  impactStatement: string;
  actionStatement: string;
  /** The statement's timestamp, else the document's. */
  effectiveTime: number;
  /** Whether one of the statement's products names the document's image. */
  applies: boolean;
  /** The subcomponent purls of the products naming the image; empty: the whole image. */
  subcomponents: string[];
}

/** A stored statement with where it comes from, as reads answer it. */
export interface VexStatementRow extends VexStatementRecord {
  documentUid: string;
  /** Its place in the document (0-based). */
  ordinal: number;
  repoUid: string;
  digest: string;
  /** When its document was stored. */
  createTime: number;
}

export interface VexStore {
  /**
   * Stores a document and its statements (in order) in one transaction. NOT_FOUND when the repo
   * does not exist. Returns the stored row.
   */
  insert(row: VexDocumentRow, statements: readonly VexStatementRecord[]): Promise<VexDocumentRow>;
  /** The documents stored for `digest` in `repoUid`, oldest first. */
  documents(repoUid: string, digest: string): Promise<VexDocumentRow[]>;
  /**
   * The statements that apply (`applies`) to each image of `images`, keyed `<repo uid>@<digest>`,
   * oldest document first and in document order within one (images without any are left out).
   */
  applicable(images: readonly { repoUid: string; digest: string }[]): Promise<Map<string, VexStatementRow[]>>;
}

/** The key of an image in {@link VexStore.applicable}'s answer. */
export function imageKey(repoUid: string, digest: string): string {
  return `${repoUid}@${digest}`;
}
