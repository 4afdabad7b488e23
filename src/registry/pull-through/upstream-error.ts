import { RemoteError } from "../remote/remote-registry.js";
import type { UpstreamConfig } from "../upstreams/upstream-directory.js";

/**
 * A pull through the cache that the upstream could not serve and no cached copy could stand in
 * for. The OCI edge answers `not-found` 404 (MANIFEST_UNKNOWN or BLOB_UNKNOWN), `rate-limited` 429
 * TOOMANYREQUESTS with Retry-After, `failed` 502. The message names the upstream and its URL and
 * what went wrong, never credentials.
 */
export class UpstreamError extends Error {
  override name = "UpstreamError";
  constructor(
    readonly kind: "not-found" | "rate-limited" | "failed",
    /** What was asked for. */
    readonly what: "manifest" | "blob",
    message: string,
    /** For `rate-limited`: how long the upstream asked to wait. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** The UpstreamError for a failed call to `upstream` (a RemoteError, or anything else thrown). */
export function upstreamErrorOf(
  upstream: UpstreamConfig,
  what: "manifest" | "blob",
  err: unknown,
): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const name = `upstream ${upstream.orgName}/${upstream.name}`;
  if (!(err instanceof RemoteError)) {
    return new UpstreamError("failed", what, `${name} (${upstream.url}) failed: ${String(err)}`);
  }
  if (err.kind === "not-found") return new UpstreamError("not-found", what, `${name}: ${err.message}`);
  if (err.kind === "rate-limited")
    return new UpstreamError(
      "rate-limited",
      what,
      `${name} is rate limited: ${err.message}`,
      err.retryAfterMs,
    );
  return new UpstreamError("failed", what, `${name} (${err.kind}): ${err.message}`);
}
