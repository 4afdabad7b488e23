import { Code } from "@connectrpc/connect";
import { DomainError } from "../core/errors.js";
import { rateLimitKey } from "../core/rate-limit-key.js";
import { rateLimitHeaders, type TokenBuckets } from "../core/token-buckets.js";
import type { CallRecord } from "./pipeline.js";

/** ErrorInfo.reason of the RESOURCE_EXHAUSTED error of a call over the API's rate limit. */
export const RATE_LIMITED_REASON = "RATE_LIMITED";

/**
 * Charges one RPC to its caller's bucket: `identityUid` when the call's token verified, else
 * undefined (the record's client address is the key). Records the rate limit headers on the
 * record (every protocol sends them, with the answer or the error), and throws RESOURCE_EXHAUSTED
 * when the bucket is empty.
 */
export type ApiRateLimiter = (record: CallRecord, identityUid: string | undefined) => void;

/** The API's rate limiter over `buckets` (ADR 0043). */
export function createApiRateLimiter(buckets: TokenBuckets): ApiRateLimiter {
  return (record, identityUid) => {
    const verdict = buckets.take(rateLimitKey(identityUid, record.clientAddress));
    record.rateLimitHeaders = rateLimitHeaders(verdict);
    if (!verdict.allowed) throw rateLimited(buckets.limit.text, verdict.retryAfterSeconds);
  };
}

/**
 * RESOURCE_EXHAUSTED (HTTP 429, gRPC 8) with ErrorInfo reason `RATE_LIMITED`, naming the limit and
 * when to retry.
 */
export function rateLimited(limitText: string, retryAfterSeconds: number): DomainError {
  return new DomainError(
    Code.ResourceExhausted,
    `Resource exhausted: rate limit of ${limitText} per caller reached; retry in ${retryAfterSeconds} s`,
    { reason: RATE_LIMITED_REASON },
  );
}
