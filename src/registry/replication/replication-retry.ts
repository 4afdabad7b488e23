import { isDomainError } from "../../core/errors.js";
import {
  ContentDamagedError,
  ContentMissingError,
  ImmutableTagError,
  InvalidDigestError,
  InvalidManifestError,
  MissingReferenceError,
} from "../content-errors.js";
import { QuotaExceededError } from "../quotas/quota-errors.js";
import { RemoteError, type RemoteErrorKind } from "../remote/remote-registry.js";
import { LocalPathError } from "./local-endpoint.js";

/** How one item (a tag) of a run is retried. */
export interface RetryPolicy {
  /** Attempts in all (the first included). */
  attempts: number;
  /** The pause before the 2nd, 3rd… attempt (the last repeats). */
  delaysMs: readonly number[];
  /** A remote's Retry-After longer than this is cut to it. */
  maxRetryAfterMs: number;
}

/** Three attempts, 1 s and 4 s apart; a rate limit's Retry-After is honoured up to 5 minutes. */
export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 3,
  delaysMs: [1000, 4000],
  maxRetryAfterMs: 5 * 60_000,
};

/** Remote failures another attempt may cure: the network, a rate limit, a broken transfer. */
const TRANSIENT: ReadonlySet<RemoteErrorKind> = new Set<RemoteErrorKind>([
  "unreachable",
  "rate-limited",
  "truncated",
  "digest-mismatch",
  "invalid-response",
]);

/**
 * Whether another attempt may succeed: transient remote failures and unknown errors (a storage
 * hiccup) yes; an answer the remote or Wharf gave on purpose (refused, missing, too large, an
 * invalid manifest, a quota, an immutable tag, a bad name) no.
 */
export function isRetryable(err: unknown): boolean {
  if (err instanceof RemoteError) return TRANSIENT.has(err.kind);
  const deliberate =
    isDomainError(err) ||
    err instanceof QuotaExceededError ||
    err instanceof ImmutableTagError ||
    err instanceof InvalidManifestError ||
    err instanceof MissingReferenceError ||
    err instanceof InvalidDigestError ||
    err instanceof ContentMissingError ||
    err instanceof ContentDamagedError ||
    err instanceof LocalPathError;
  return !deliberate;
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", stop);
      resolve();
    }, ms);
    const stop = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", stop, { once: true });
  });
}

/**
 * Runs `attempt` until it succeeds, fails with an error that is not retryable, or has been tried
 * `policy.attempts` times; between attempts waits the policy's delay, or a `rate-limited` error's
 * Retry-After when longer. Rejects with the last error, or with the signal's reason once aborted.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  signal: AbortSignal,
  attempt: () => Promise<T>,
): Promise<T> {
  for (let n = 1; ; n++) {
    signal.throwIfAborted();
    try {
      return await attempt();
    } catch (err) {
      signal.throwIfAborted();
      if (n >= policy.attempts || !isRetryable(err)) throw err;
      const delay = policy.delaysMs[Math.min(n - 1, policy.delaysMs.length - 1)] ?? 0;
      const asked = err instanceof RemoteError && err.kind === "rate-limited" ? (err.retryAfterMs ?? 0) : 0;
      await pause(Math.max(delay, Math.min(asked, policy.maxRetryAfterMs)), signal);
    }
  }
}
