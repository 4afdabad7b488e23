import type { Clock } from "../../core/clock.js";

/** How long a token lives when the token service does not say (the Docker token spec's minimum). */
export const DEFAULT_TOKEN_SECONDS = 60;
/** A token is not used in its last seconds: a request sent just before expiry would fail with 401. */
const EXPIRY_MARGIN_SECONDS = 5;
/** Tokens kept per client; past it the oldest is dropped (scopes are per repo, a run can touch many). */
const MAX_TOKENS = 1000;

/** Bearer tokens of one remote, by scope, each until it expires (on the injected clock). */
export interface TokenCache {
  get(scope: string): string | undefined;
  /** Keeps `token` for `expiresInSeconds` (DEFAULT_TOKEN_SECONDS when not a positive number). */
  set(scope: string, token: string, expiresInSeconds: unknown): void;
  delete(scope: string): void;
}

/** A TokenCache on `clock`. */
export function createTokenCache(clock: Clock): TokenCache {
  const tokens = new Map<string, { token: string; expires: number }>();
  return {
    get(scope) {
      const entry = tokens.get(scope);
      if (!entry) return undefined;
      if (clock.now() >= entry.expires) {
        tokens.delete(scope);
        return undefined;
      }
      return entry.token;
    },
    set(scope, token, expiresInSeconds) {
      const seconds =
        typeof expiresInSeconds === "number" && Number.isFinite(expiresInSeconds) && expiresInSeconds > 0
          ? expiresInSeconds
          : DEFAULT_TOKEN_SECONDS;
      const margin = Math.min(EXPIRY_MARGIN_SECONDS, seconds / 2);
      tokens.delete(scope);
      if (tokens.size >= MAX_TOKENS) {
        const oldest = tokens.keys().next().value;
        if (oldest !== undefined) tokens.delete(oldest);
      }
      tokens.set(scope, { token, expires: clock.now() + (seconds - margin) * 1000 });
    },
    delete(scope) {
      tokens.delete(scope);
    },
  };
}
