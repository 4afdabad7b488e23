import type { AccessScopes } from "../core/context.js";

/**
 * The audit log (ADR 0048): append-only records of who did what. Records are appended in the
 * transaction of the change they describe (or alone, for refusals), listed newest first, and
 * deleted only by retention (`pruneBefore`). Times are ms since the epoch.
 */

/** One audit record as stored. */
export interface AuditRow {
  /** 32 hex. */
  uid: string;
  time: number;
  /** The uidp the resource belongs to ("" when the call named none). */
  groupUid: string;
  /** The identity uid of the caller ("" when anonymous). */
  actor: string;
  /** The `act` claim's `iss`, `sub` and `aud`, when the caller's token carried one. */
  act?: { iss: string; sub: string; aud: string } | undefined;
  action: string;
  resource: string;
  /** OK, DENIED or FAILED. */
  resultCode: "OK" | "DENIED" | "FAILED";
  resultReason: string;
  requestId: string;
  sourceAddress: string;
  userAgent: string;
}

/** Which records a list returns (every field optional; set fields AND together). */
export interface AuditFilter {
  /** The records of this group and its descendants. */
  descendantsOf?: string | undefined;
  /** Restricts to the authorized subtrees (absent or `{all: true}`: no restriction). */
  within?: AccessScopes | undefined;
  actor?: string | undefined;
  action?: string | undefined;
  resource?: string | undefined;
  resultCode?: string | undefined;
  /** time >= start. */
  start?: number | undefined;
  /** time < end. */
  end?: number | undefined;
}

/** Where a page starts: after the record at (time, seq) in newest-first order. */
export interface AuditCursor {
  time: number;
  seq: number;
}

/** A stored record and its position. */
export interface AuditListed {
  row: AuditRow;
  seq: number;
}

export interface AuditStore {
  /** Appends records (in the caller's transaction when it is one). */
  append(rows: readonly AuditRow[]): Promise<void>;
  /** Newest first (time, then insertion order), after `after`, at most `limit`. */
  list(filter: AuditFilter, page: { after?: AuditCursor | undefined; limit: number }): Promise<AuditListed[]>;
  /**
   * Deletes at most `limit` of the oldest records older than `before` and returns how many
   * (idempotent: replicas running it at once delete each record once between them).
   */
  pruneBefore(before: number, limit: number): Promise<number>;
}
