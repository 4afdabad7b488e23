import { randomBytes } from "node:crypto";
import { Code } from "@connectrpc/connect";
import type { Principal } from "../core/context.js";
import type { DomainError } from "../core/errors.js";
import type { AuditRow } from "../storage/audit-store.js";

/** A new record uid: 16 random bytes as hex. */
export function newAuditUid(): string {
  return randomBytes(16).toString("hex");
}

/** The `act` of a caller's token as the record keeps it (`aud` joined by spaces when a list). */
export function actOf(principal: Principal | undefined): AuditRow["act"] {
  const act = principal?.claims.act;
  if (typeof act !== "object" || act === null || Array.isArray(act)) return undefined;
  const claims = act as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : Array.isArray(v) ? v.join(" ") : "");
  return { iss: text(claims.iss), sub: text(claims.sub), aud: text(claims.aud) };
}

/**
 * The result of a call that failed with `err` (`codeName` its gRPC code's name): DENIED for
 * PERMISSION_DENIED, UNAUTHENTICATED and RESOURCE_EXHAUSTED (rate limited), FAILED otherwise; the reason is the first
 * PreconditionFailure violation's type, else the ErrorInfo reason, else the code's name.
 */
export function resultOfError(
  err: DomainError,
  codeName: string,
): Pick<AuditRow, "resultCode" | "resultReason"> {
  // A rate-limited call was refused, as the registry's 429 is (its reason: RATE_LIMITED).
  const denied =
    err.code === Code.PermissionDenied ||
    err.code === Code.Unauthenticated ||
    err.code === Code.ResourceExhausted;
  const reason = err.details.preconditionViolations?.[0]?.type ?? err.details.reason ?? codeName;
  return { resultCode: denied ? "DENIED" : "FAILED", resultReason: reason };
}

/** What a record says of where the call came from. */
export interface CallOrigin {
  requestId: string;
  sourceAddress: string;
  userAgent: string;
}

/**
 * The longest text a record keeps of what the client sent (a refused request's resource may be
 * any text, a User-Agent up to the header limit): the log must not be a place to store bulk.
 */
export const MAX_CLIENT_TEXT = 512;

const clip = (text: string) => (text.length > MAX_CLIENT_TEXT ? text.slice(0, MAX_CLIENT_TEXT) : text);

/**
 * One record of `principal`'s `action` on `resource` (of `group`) at `time`; the texts the client
 * chose (resource, reason, address, User-Agent) clipped to MAX_CLIENT_TEXT characters.
 */
export function auditRow(
  principal: Principal | undefined,
  origin: CallOrigin,
  what: {
    time: number;
    action: string;
    resource: string;
    group: string;
    resultCode: AuditRow["resultCode"];
    resultReason?: string;
  },
): AuditRow {
  return {
    uid: newAuditUid(),
    time: what.time,
    groupUid: clip(what.group),
    actor: principal?.identityUid ?? "",
    act: actOf(principal),
    action: what.action,
    resource: clip(what.resource),
    resultCode: what.resultCode,
    resultReason: clip(what.resultReason ?? ""),
    requestId: origin.requestId,
    sourceAddress: clip(origin.sourceAddress),
    userAgent: clip(origin.userAgent),
  };
}
