import { errorOfResponse } from "./errors.js";
import type { FetchFunction } from "./http.js";
import { fetchOrUnavailable, sendForJson } from "./http.js";

/** A PKCE pair (RFC 7636, S256): the verifier is kept, the challenge sent to `/oauth`. */
export interface PkcePair {
  verifier: string;
  challenge: string;
}

/** What `POST /oauth/token` answers for a redeemed login code. */
export interface LoginTokens {
  token: string;
  /** RFC 3339. */
  expiry: string;
  /** Present when the login asked for one and no session-only group grants apply. */
  refreshToken?: string;
}

/** Parameters of {@link browserLoginUrl}. */
export interface BrowserLoginParameters {
  /** Where Wharf sends the browser back with `code` and `state` (a loopback URL or the console's `/login/callback`). */
  redirect: string;
  /** The S256 challenge of the verifier {@link redeemLoginCode} will present. */
  codeChallenge: string;
  /** Echoed back on the redirect: check it there. */
  state: string;
  /** An organization's identity provider uid; "" = the server's default provider. */
  identityProvider?: string;
  /** The token's audience; default the API URL. */
  audience?: string;
  /** Ask for a refresh token too (default true). */
  refreshToken?: boolean;
  /** Passed on to the provider, e.g. the email to log in as. */
  loginHint?: string;
}

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * A random string of `bytes` random bytes, base64url (for PKCE verifiers and OAuth `state`).
 * Uses WebCrypto (`globalThis.crypto`: browsers, Node 20).
 */
export function randomUrlSafe(bytes = 32): string {
  return base64url(globalThis.crypto.getRandomValues(new Uint8Array(bytes)));
}

/**
 * A fresh PKCE pair: 32 random bytes as the verifier, its SHA-256 as the challenge. Needs
 * WebCrypto's `subtle`, which browsers offer only on secure origins (https, or localhost).
 */
export async function createPkcePair(): Promise<PkcePair> {
  const verifier = randomUrlSafe(32);
  const digest = await globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return { verifier, challenge: base64url(new Uint8Array(digest)) };
}

/** The URL of `<apiUrl>/oauth` that starts a browser login (authorization code + PKCE, S256). */
export function browserLoginUrl(apiUrl: string, params: BrowserLoginParameters): string {
  const url = new URL("/oauth", apiUrl);
  url.search = new URLSearchParams({
    redirect: params.redirect,
    code_challenge: params.codeChallenge,
    code_challenge_method: "S256",
    state: params.state,
    identity_provider: params.identityProvider ?? "",
    audience: params.audience ?? "",
    create_refresh_token: String(params.refreshToken ?? true),
    ...(params.loginHint ? { login_hint: params.loginHint } : {}),
  }).toString();
  return url.toString();
}

/**
 * Asks the server whether `loginUrl` (from {@link browserLoginUrl}) would send the browser on to
 * the identity provider, without following the redirect; rejects with the server's
 * `WharfApiError` when it refuses (unknown provider, no default provider, bad redirect…), so a
 * page can show why instead of navigating to an error. (The server keeps the probe's pending
 * login until it expires, 10 minutes.)
 */
export async function checkBrowserLogin(
  loginUrl: string,
  fetchFn: FetchFunction = globalThis.fetch,
): Promise<void> {
  const response = await fetchOrUnavailable(fetchFn, loginUrl, { method: "GET", redirect: "manual" });
  // Browsers hide a manual redirect's status (an "opaqueredirect" response, status 0).
  if (response.type === "opaqueredirect" || (response.status >= 300 && response.status < 400)) return;
  throw await errorOfResponse(response);
}

/**
 * Redeems a browser login's one-time code with the PKCE verifier at `<apiUrl>/oauth/token`.
 * Rejects with `WharfApiError` PERMISSION_DENIED for an unknown, expired or used code, or a
 * wrong verifier.
 */
export function redeemLoginCode(
  apiUrl: string,
  params: { code: string; codeVerifier: string },
  fetchFn: FetchFunction = globalThis.fetch,
): Promise<LoginTokens> {
  return sendForJson<LoginTokens>(fetchFn, new URL("/oauth/token", apiUrl), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ code: params.code, code_verifier: params.codeVerifier }),
  });
}
