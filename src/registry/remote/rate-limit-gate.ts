import type { Clock } from "../../core/clock.js";
import { RemoteError } from "./remote-registry.js";

/** How long to wait after a 429 that names no (readable) Retry-After. */
export const DEFAULT_RETRY_AFTER_MS = 60_000;
/** The longest wait a remote can impose (a hostile Retry-After must not shut the client for good). */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;

/**
 * The milliseconds a `Retry-After` value asks for (RFC 9110 §10.2.3): delay seconds or an HTTP
 * date (relative to `now`); DEFAULT_RETRY_AFTER_MS when absent or unreadable, at most one day.
 */
export function retryAfterMs(value: string | undefined, now: number): number {
  const text = value?.trim() ?? "";
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    // An HTTP date names its weekday or month; Date.parse alone would take "-5" for a year.
    const date = /[A-Za-z]{3}/.test(text) ? Date.parse(text) : Number.NaN;
    ms = Number.isNaN(date) ? DEFAULT_RETRY_AFTER_MS : Math.max(0, date - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}

/**
 * After a 429, refuses every request of one client until the remote's Retry-After has passed, so
 * a rate-limited remote is not asked again (and again) before it said it would answer.
 */
export interface RateLimitGate {
  /** Throws RemoteError `rate-limited` (with the time left) while closed. `what` names the call. */
  check(what: string): void;
  /** Closes the gate for the `Retry-After` given; returns the wait in milliseconds. */
  close(retryAfter: string | undefined): number;
}

/** A gate on `clock`. */
export function createRateLimitGate(clock: Clock): RateLimitGate {
  let openAt = 0;
  return {
    check(what) {
      const left = openAt - clock.now();
      if (left > 0) {
        throw new RemoteError(
          "rate-limited",
          `${what}: not sent, the remote asked to wait ${Math.ceil(left / 1000)} s more (HTTP 429 Retry-After)`,
          429,
          left,
        );
      }
    },
    close(retryAfter) {
      const now = clock.now();
      const ms = retryAfterMs(retryAfter, now);
      openAt = Math.max(openAt, now + ms);
      return ms;
    },
  };
}
