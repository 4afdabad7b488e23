import type { FetchFunction } from "./http.js";
import { exchangeToken, type IssuedToken } from "./sts.js";

/** Where the client gets the bearer token of each call; asked before every call, so it may cache. */
export interface TokenSource {
  /** A currently valid token ("" = call without one). */
  token(): Promise<string>;
}

/** A token is renewed when it expires within this margin. */
export const EXPIRY_MARGIN_MS = 60_000;

/** Always the same token (e.g. from `wharf auth token`, an environment variable, a CI secret). */
export function staticToken(token: string): TokenSource {
  return { token: async () => token };
}

/**
 * A source that calls `issue` for a token when it has none, or when the one it has expires within
 * {@link EXPIRY_MARGIN_MS}; concurrent callers share one `issue` call. A failed `issue` is not
 * cached: the next call tries again.
 */
export function cachingTokenSource(
  issue: () => Promise<{ token: string; expiry: string }>,
  now: () => number = Date.now,
): TokenSource {
  let current: { token: string; expiresAt: number } | undefined;
  let pending: Promise<string> | undefined;
  return {
    token() {
      if (current && current.expiresAt - now() > EXPIRY_MARGIN_MS) return Promise.resolve(current.token);
      pending ??= issue()
        .then((issued) => {
          current = { token: issued.token, expiresAt: Date.parse(issued.expiry) };
          return issued.token;
        })
        .finally(() => {
          pending = undefined;
        });
      return pending;
    },
  };
}

/** Options of {@link stsExchange}. */
export interface StsExchangeOptions {
  /** The Wharf API URL whose `/sts/exchange` is called. */
  apiUrl: string;
  /** Uidp of the Wharf identity to assume (its claim match or static keys must accept the token). */
  identity: string;
  /**
   * The external OIDC token presented (a CI job's ID token, a cloud workload token…): a string,
   * or a source asked again at each exchange (such tokens are short-lived too).
   */
  externalToken: string | TokenSource;
  /** Audiences of the Wharf token; default the API URL. */
  audience?: readonly string[];
  /** Group uidps to restrict the token to. */
  scopes?: readonly string[];
  /** Capability names to restrict the token to. */
  caps?: readonly string[];
  fetch?: FetchFunction;
}

/**
 * Wharf tokens for `identity`, from exchanging an external OIDC token at the STS; a new exchange
 * runs when the current token is about to expire. A refused exchange rejects the call with the
 * STS's WharfApiError (PERMISSION_DENIED "verifying token: …").
 */
export function stsExchange(options: StsExchangeOptions): TokenSource {
  const external =
    typeof options.externalToken === "string" ? staticToken(options.externalToken) : options.externalToken;
  return cachingTokenSource(
    async (): Promise<IssuedToken> =>
      exchangeToken(
        options.apiUrl,
        await external.token(),
        {
          identity: options.identity,
          ...(options.audience ? { audience: options.audience } : {}),
          ...(options.scopes ? { scopes: options.scopes } : {}),
          ...(options.caps ? { caps: options.caps } : {}),
        },
        options.fetch,
      ),
  );
}
