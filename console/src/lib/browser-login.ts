// The browser login from the console (authorization code + PKCE through `/oauth`): the verifier
// and state wait in sessionStorage while the browser visits the identity provider.
import {
  browserLoginUrl,
  checkBrowserLogin,
  createPkcePair,
  type LoginTokens,
  randomUrlSafe,
  redeemLoginCode,
} from "wharf/sdk";

/** The console page the server sends the browser back to (see the server's login redirect check). */
export const LOGIN_CALLBACK_PATH = "/login/callback";

const KEY = "wharf.console.login";

interface PendingLogin {
  verifier: string;
  state: string;
  /** The console path to show once signed in. */
  returnTo: string;
}

/**
 * Starts a login: keeps a fresh PKCE verifier and state for this tab, and answers the `/oauth`
 * URL to send the browser to (`identityProvider` "" = the server's default provider). Rejects
 * with the server's error when it would refuse that login.
 */
export async function startBrowserLogin(options: {
  origin: string;
  identityProvider: string;
  returnTo: string;
  storage?: Storage;
}): Promise<string> {
  const { verifier, challenge } = await createPkcePair();
  const pending: PendingLogin = { verifier, state: randomUrlSafe(16), returnTo: options.returnTo };
  const url = browserLoginUrl(options.origin, {
    redirect: `${options.origin}${LOGIN_CALLBACK_PATH}`,
    codeChallenge: challenge,
    state: pending.state,
    identityProvider: options.identityProvider,
    // The console keeps no refresh token: a tab's session ends with its token.
    refreshToken: false,
  });
  await checkBrowserLogin(url);
  (options.storage ?? window.sessionStorage).setItem(KEY, JSON.stringify(pending));
  return url;
}

/** Why a login could not finish, in words for the user. */
export class LoginFailed extends Error {}

/**
 * Finishes a login on the callback page: checks `state` against the pending login (once: it is
 * removed), then redeems `code` with the verifier. Rejects with {@link LoginFailed} for a
 * provider's error or a state mismatch, or the server's `WharfApiError`.
 */
export async function finishBrowserLogin(
  origin: string,
  params: URLSearchParams,
  storage: Storage = window.sessionStorage,
): Promise<{ tokens: LoginTokens; returnTo: string }> {
  const raw = storage.getItem(KEY);
  storage.removeItem(KEY);
  const pending = raw ? (JSON.parse(raw) as PendingLogin) : undefined;
  const error = params.get("error");
  if (error) {
    const description = params.get("error_description");
    throw new LoginFailed(`The login did not finish (${error})${description ? `: ${description}` : "."}`);
  }
  if (!pending || params.get("state") !== pending.state) {
    throw new LoginFailed("This login was not started in this tab (or was already used): sign in again.");
  }
  const code = params.get("code") ?? "";
  const tokens = await redeemLoginCode(origin, { code, codeVerifier: pending.verifier });
  return { tokens, returnTo: pending.returnTo };
}
