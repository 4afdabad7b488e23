import { Code } from "@connectrpc/connect";
import { isWharfApiError, WharfApiError } from "../errors.js";
import type { FetchFunction } from "../http.js";
import { exchangeRefreshToken } from "../sts.js";
import { EXPIRY_MARGIN_MS, type TokenSource } from "../token-sources.js";
import { loadCredentials, type StoredCredentials, saveCredentials } from "./stored-credentials.js";

/** Options of {@link storedLogin} and {@link storedToken}. */
export interface StoredLoginOptions {
  /** The API URL the login was for (`wharf auth login --api-url`); only its origin counts. */
  apiUrl: string;
  /** Where the credentials file is found (WHARF_CONFIG_DIR, XDG_CONFIG_HOME); default process.env. */
  env?: NodeJS.ProcessEnv;
  fetch?: FetchFunction;
  /** The time, for deciding a token is about to expire; default Date.now. */
  now?: () => number;
}

/**
 * The token `wharf auth login` stored for `apiUrl`, refreshed when it expires within a minute:
 * the stored refresh token is spent at `/sts/exchange_refresh_token` and the new pair replaces it
 * in the credentials file. UNAUTHENTICATED WharfApiError when there is no login, or it expired
 * with no refresh token; a refused refresh rejects with the server's code, both saying to log in.
 */
export async function storedToken(options: StoredLoginOptions): Promise<string> {
  return (await freshCredentials(options)).token;
}

/** The stored credentials of the login, refreshed first when needed (see {@link storedToken}). */
async function freshCredentials(options: StoredLoginOptions): Promise<StoredCredentials> {
  const apiUrl = new URL(options.apiUrl).origin;
  const now = (options.now ?? Date.now)();
  const stored = await loadCredentials(apiUrl, options.env);
  if (!stored) {
    throw new WharfApiError({
      code: Code.Unauthenticated,
      message: `not logged in to ${apiUrl}: run \`wharf auth login\``,
    });
  }
  if (Date.parse(stored.expiry) - now > EXPIRY_MARGIN_MS) return stored;
  if (!stored.refreshToken) {
    throw new WharfApiError({
      code: Code.Unauthenticated,
      message: `the token for ${apiUrl} expired: run \`wharf auth login\``,
    });
  }
  let pair: Awaited<ReturnType<typeof exchangeRefreshToken>>;
  try {
    pair = await exchangeRefreshToken(apiUrl, stored.refreshToken, options.fetch);
  } catch (err) {
    const reason = (err as Error).message;
    throw new WharfApiError({
      code: isWharfApiError(err) ? err.code : Code.Unknown,
      message: `refreshing the token for ${apiUrl} failed (${reason}): run \`wharf auth login\``,
      cause: err,
    });
  }
  const next: StoredCredentials = {
    token: pair.token.token,
    expiry: pair.token.expiry,
    refreshToken: pair.refreshToken.token,
  };
  await saveCredentials(apiUrl, next, options.env);
  return next;
}

/**
 * The stored login of `wharf auth login` as a token source (see {@link storedToken}). The token is
 * kept in memory until it is about to expire; calls that need a refresh at the same time share
 * one, since a refresh token spent twice revokes the whole login.
 */
export function storedLogin(options: StoredLoginOptions): TokenSource {
  const now = options.now ?? Date.now;
  let current: { token: string; expiresAt: number } | undefined;
  let pending: Promise<string> | undefined;
  return {
    token() {
      if (current && current.expiresAt - now() > EXPIRY_MARGIN_MS) return Promise.resolve(current.token);
      pending ??= freshCredentials(options)
        .then((fresh) => {
          current = { token: fresh.token, expiresAt: Date.parse(fresh.expiry) };
          return fresh.token;
        })
        .finally(() => {
          pending = undefined;
        });
      return pending;
    },
  };
}
