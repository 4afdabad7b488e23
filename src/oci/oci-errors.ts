import type { ServerResponse } from "node:http";
import { Code } from "@connectrpc/connect";
import { isDomainError } from "../core/errors.js";
import {
  ContentDamagedError,
  ContentMissingError,
  ImmutableTagError,
  InvalidDigestError,
  InvalidManifestError,
  MissingReferenceError,
  UploadRangeError,
  UploadSessionError,
} from "../registry/content-errors.js";
import { UpstreamError } from "../registry/pull-through/upstream-error.js";
import { QuotaExceededError } from "../registry/quotas/quota-errors.js";
import { isRepoQuotaRefusal } from "../registry/quotas/repo-quota.js";

/**
 * The error codes of the OCI Distribution Spec (plus the Docker-era ones clients still expect),
 * each with its HTTP status. `INVALID_ARGUMENT` is Wharf's own, for bad query parameters of the
 * Tag History API, which the spec's table has no code for.
 */
export const OCI_ERROR_STATUS = {
  BLOB_UNKNOWN: 404,
  BLOB_UPLOAD_INVALID: 400,
  BLOB_UPLOAD_UNKNOWN: 404,
  DIGEST_INVALID: 400,
  MANIFEST_BLOB_UNKNOWN: 400,
  MANIFEST_INVALID: 400,
  MANIFEST_UNKNOWN: 404,
  NAME_INVALID: 400,
  NAME_UNKNOWN: 404,
  SIZE_INVALID: 400,
  UNAUTHORIZED: 401,
  DENIED: 403,
  UNSUPPORTED: 415,
  TOOMANYREQUESTS: 429,
  RANGE_INVALID: 416,
  PAGINATION_NUMBER_INVALID: 400,
  INVALID_ARGUMENT: 400,
  UNAVAILABLE: 503,
  INTERNAL: 500,
} as const;

export type OciErrorCode = keyof typeof OCI_ERROR_STATUS;

/** An error answered with the spec's envelope `{"errors":[{code, message, detail}]}`. */
export class OciError extends Error {
  readonly status: number;
  /** More than the code for the audit record of a refusal (e.g. which pull policy and rules refused). */
  auditReason?: string;
  constructor(
    readonly code: OciErrorCode,
    message: string,
    readonly detail?: unknown,
    /** Extra response headers (e.g. `WWW-Authenticate` on 401, `Content-Range` on 416). */
    readonly headers: Record<string, string> = {},
    status?: number,
  ) {
    super(message);
    this.name = "OciError";
    this.status = status ?? OCI_ERROR_STATUS[code];
  }
}

/**
 * An OciError that also means the registry lost data: the metadata names content the blob store no
 * longer has (a deleted file or S3 object). Answered like any OciError (404 `BLOB_UNKNOWN`); the
 * request handler also logs one line at error level naming `key`, for the operator.
 */
export class ContentLostError extends OciError {
  constructor(
    message: string,
    /** The blob driver key that is missing. */
    readonly key: string,
  ) {
    super("BLOB_UNKNOWN", message);
    this.name = "ContentLostError";
  }
}

/**
 * An OciError that means the blob store holds content of another size than the metadata records
 * for `key` (ContentDamagedError): answered 500 `INTERNAL` with the OCI error body and nothing of
 * the blob sent (ADR 0020); the request handler logs one error line naming `key` and both sizes.
 */
export class ContentDamagedOciError extends OciError {
  constructor(
    message: string,
    readonly key: string,
    readonly expectedSize: number,
    readonly storedSize: number,
  ) {
    super("INTERNAL", message);
    this.name = "ContentDamagedOciError";
  }
}

/** Shorthand constructor. */
export function ociError(code: OciErrorCode, message: string, detail?: unknown): OciError {
  return new OciError(code, message, detail);
}

/**
 * The OciError for anything a handler threw: OciErrors as they are; the registry's content errors
 * (src/registry/content-errors.ts) as DIGEST_INVALID, MANIFEST_INVALID, MANIFEST_BLOB_UNKNOWN or
 * MANIFEST_UNKNOWN (400), BLOB_UPLOAD_UNKNOWN, BLOB_UPLOAD_INVALID, RANGE_INVALID and (lost content)
 * BLOB_UNKNOWN; an immutable tag, and quota refusals (a push past the storage quota, a repo past the
 * repo count), as 403 DENIED; a pull-through cache's upstream failure (UpstreamError) as 404
 * MANIFEST_UNKNOWN or BLOB_UNKNOWN, 429 TOOMANYREQUESTS with Retry-After, or 502; DomainErrors of the platform by their gRPC code (NOT_FOUND →
 * NAME_UNKNOWN, PERMISSION_DENIED → DENIED, …); anything else is an internal error whose message is
 * not shown to the client.
 */
export function toOciError(err: unknown): OciError {
  if (err instanceof OciError) return err;
  if (err instanceof InvalidDigestError) return ociError("DIGEST_INVALID", err.message);
  if (err instanceof ImmutableTagError) return ociError("DENIED", err.message, { rule: err.ruleUid });
  if (err instanceof InvalidManifestError) return ociError("MANIFEST_INVALID", err.message, err.detail);
  if (err instanceof MissingReferenceError) {
    const code = err.kind === "manifest" ? "MANIFEST_UNKNOWN" : "MANIFEST_BLOB_UNKNOWN";
    return new OciError(code, err.message, { digest: err.digest }, {}, 400);
  }
  if (err instanceof UploadSessionError) {
    return ociError(err.state === "gone" ? "BLOB_UPLOAD_UNKNOWN" : "BLOB_UPLOAD_INVALID", err.message);
  }
  if (err instanceof UploadRangeError) {
    return new OciError("RANGE_INVALID", err.message, undefined, {
      range: `0-${Math.max(err.received - 1, 0)}`,
    });
  }
  if (err instanceof QuotaExceededError) return ociError("DENIED", err.message);
  if (err instanceof UpstreamError) return upstreamOciError(err);
  if (err instanceof ContentMissingError) return new ContentLostError(err.message, err.key);
  if (err instanceof ContentDamagedError)
    return new ContentDamagedOciError(err.message, err.key, err.expectedSize, err.storedSize);
  if (isDomainError(err)) {
    if (isRepoQuotaRefusal(err)) return ociError("DENIED", err.message);
    switch (err.code) {
      case Code.NotFound:
        return ociError("NAME_UNKNOWN", err.message);
      case Code.PermissionDenied:
        return ociError("DENIED", err.message);
      case Code.Unauthenticated:
        return ociError("UNAUTHORIZED", err.message);
      case Code.InvalidArgument:
        return ociError("NAME_INVALID", err.message);
      case Code.AlreadyExists:
      case Code.Aborted:
      case Code.FailedPrecondition:
        return new OciError("DENIED", err.message, undefined, {}, 409);
      case Code.Unavailable:
        return ociError("UNAVAILABLE", err.message);
    }
  }
  return ociError("INTERNAL", "internal error");
}

/** The answer to a pull the upstream could not serve (ADR 0052). */
function upstreamOciError(err: UpstreamError): OciError {
  if (err.kind === "not-found")
    return ociError(err.what === "blob" ? "BLOB_UNKNOWN" : "MANIFEST_UNKNOWN", err.message);
  if (err.kind === "rate-limited") {
    const seconds = Math.max(1, Math.ceil((err.retryAfterMs ?? 60_000) / 1000));
    return new OciError("TOOMANYREQUESTS", err.message, undefined, { "retry-after": String(seconds) });
  }
  return new OciError("UNAVAILABLE", err.message, undefined, {}, 502);
}

/** Writes the error envelope (a HEAD response gets the status and headers only). */
export function sendOciError(res: ServerResponse, err: OciError, head = false): void {
  const body = JSON.stringify({
    errors: [
      { code: err.code, message: err.message, ...(err.detail === undefined ? {} : { detail: err.detail }) },
    ],
  });
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(err.status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
    ...err.headers,
  });
  res.end(head ? undefined : body);
}
