import type { Clock } from "./clock.js";
import type { RateLimit } from "./rate-limit-spec.js";

/** What one request's charge to its bucket decided, and what the rate limit headers say. */
export interface RateLimitVerdict {
  /** Whether the request may go on (a token was taken); a refused request takes none. */
  readonly allowed: boolean;
  /** The bucket's capacity (`RateLimit-Limit`). */
  readonly limit: number;
  /** Whole requests the caller may still make at once, after this one (`RateLimit-Remaining`). */
  readonly remaining: number;
  /** Seconds, rounded up, until the bucket is full again (`RateLimit-Reset`; 0 when it is). */
  readonly resetSeconds: number;
  /** For a refused request: seconds, rounded up (at least 1), until one would be let through (`Retry-After`); else 0. */
  readonly retryAfterSeconds: number;
}

/** Token buckets of one rate limit, one per key (an identity, or a client address). */
export interface TokenBuckets {
  readonly limit: RateLimit;
  /**
   * Charges one request to `key`'s bucket: allowed (and a token taken) when the bucket holds at
   * least one token, refused (nothing taken) otherwise. A key never seen, or forgotten, starts
   * with a full bucket. Synchronous: the check and the charge cannot interleave with another
   * request's.
   */
  take(key: string): RateLimitVerdict;
  /** Buckets held now (never more than `maxKeys`). */
  readonly size: number;
}

/** Buckets one {@link TokenBuckets} holds by default: about 100 bytes each, so a few MB at most. */
export const DEFAULT_MAX_BUCKETS = 50_000;

/** Rounding slack, in tokens: rates like 3/s make fractional intervals. */
const EPSILON = 1e-9;

/**
 * Creates the buckets of `limit`, timed by `clock`. Each bucket is one number: the instant it
 * will be full again (the generic cell rate algorithm's "theoretical arrival time"), so a bucket
 * whose instant has passed is full and equal to none at all. Memory is bounded: when a new key
 * finds `maxKeys` buckets held, the full ones are dropped (which forgets nothing), then, if still
 * more than nine tenths remain, the least recently charged ones (each of which then starts full
 * again: under a flood of distinct keys the limit loosens for those, memory does not grow).
 * A clock that steps back costs a caller at most one empty bucket's refill, never the step.
 */
export function createTokenBuckets(
  limit: RateLimit,
  clock: Clock,
  maxKeys: number = DEFAULT_MAX_BUCKETS,
): TokenBuckets {
  if (!(Number.isInteger(maxKeys) && maxKeys >= 1))
    throw new RangeError("maxKeys must be a positive integer");
  const { burst } = limit;
  /** Milliseconds one token takes to come back. */
  const interval = 1000 / limit.perSecond;
  /** Per key: when its bucket is full again (ms since the epoch). Oldest charge first. */
  const fullAt = new Map<string, number>();

  const makeRoom = (now: number): void => {
    for (const [key, at] of fullAt) if (at <= now) fullAt.delete(key);
    // Evicting a batch keeps the sweep above from running on every new key while the map is full.
    const target = Math.floor(maxKeys * 0.9);
    for (const key of fullAt.keys()) {
      if (fullAt.size <= target) break;
      fullAt.delete(key);
    }
  };

  return {
    limit,
    get size() {
      return fullAt.size;
    },
    take(key) {
      const now = clock.now();
      const held = fullAt.get(key);
      /** Tokens missing from a full bucket now (a step back of the clock counts as no time). */
      const missing = held === undefined ? 0 : Math.min(burst, Math.max(0, held - now) / interval);
      if (missing + 1 > burst + EPSILON) {
        // Only a clock stepped back puts the instant beyond an empty bucket's: wait one refill, not the step.
        if (held !== undefined && held - now > burst * interval) fullAt.set(key, now + burst * interval);
        return {
          allowed: false,
          limit: burst,
          remaining: 0,
          resetSeconds: wholeSeconds(missing * interval),
          retryAfterSeconds: Math.max(1, wholeSeconds((missing + 1 - burst) * interval)),
        };
      }
      const after = missing + 1;
      if (held === undefined) {
        if (fullAt.size >= maxKeys) makeRoom(now);
      } else fullAt.delete(key); // re-inserted last: the map stays in order of last charge
      fullAt.set(key, now + after * interval);
      return {
        allowed: true,
        limit: burst,
        remaining: Math.floor(burst - after + EPSILON),
        resetSeconds: wholeSeconds(after * interval),
        retryAfterSeconds: 0,
      };
    },
  };
}

/**
 * The rate limit headers of a verdict: `RateLimit-Limit`, `RateLimit-Remaining` and
 * `RateLimit-Reset` (delta seconds, as the IETF httpapi drafts before the structured-field form
 * name them), plus `Retry-After` for a refused request. Lower-case names (HTTP/2's, and gRPC
 * metadata's).
 */
export function rateLimitHeaders(verdict: RateLimitVerdict): Record<string, string> {
  const headers: Record<string, string> = {
    "ratelimit-limit": String(verdict.limit),
    "ratelimit-remaining": String(verdict.remaining),
    "ratelimit-reset": String(verdict.resetSeconds),
  };
  if (!verdict.allowed) headers["retry-after"] = String(verdict.retryAfterSeconds);
  return headers;
}

/** Milliseconds as whole seconds, rounded up (float noise below a microsecond ignored). */
function wholeSeconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000 - 1e-6));
}
