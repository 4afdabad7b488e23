import type { CallAudit, Principal } from "./context.js";
import type { DomainError } from "./errors.js";

/** What the API pipeline tells the audit log of a mutating call once it is answered (ADR 0048). */
export interface FinishedCall {
  audit: CallAudit;
  principal: Principal | undefined;
  /** The resource the request names and its group ("" when none). */
  resource: string;
  group: string;
  /** The error answered and its gRPC code's name; undefined for a success. */
  error?: { error: DomainError; codeName: string } | undefined;
}

/** Writes the audit record of a mutating call that its change did not already write. */
export interface CallAuditor {
  /**
   * Called once per mutating call after its outcome is known, before the answer is sent: writes
   * the record of a refused or failed call, or of a success whose handler recorded no change
   * (`audit.recorded` false). Must not reject.
   */
  finished(call: FinishedCall): Promise<void>;
}
