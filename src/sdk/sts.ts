import { bearer, type FetchFunction, sendForJson } from "./http.js";

/** A token as the STS answers it: `expiry` in RFC 3339. */
export interface IssuedToken {
  token: string;
  expiry: string;
  /** Only when asked for (`createRefreshToken`) and allowed. */
  refreshToken?: string;
}

/** Parameters of an STS exchange (`/sts/exchange`). */
export interface ExchangeParameters {
  /** Audiences of the new token (the API URL and/or the registry URL); none = the API URL. */
  audience?: readonly string[];
  /** Uidp of the identity to assume; none = re-issue a Wharf token, narrowed. */
  identity?: string;
  /** Group uidps to restrict the token to. */
  scopes?: readonly string[];
  /** Capability names to restrict the token to (e.g. `repo.list`). */
  caps?: readonly string[];
  /** Also ask for a refresh token (only for an assumed identity). */
  createRefreshToken?: boolean;
}

/**
 * Exchanges `presented` (an external OIDC token, or a Wharf API token) at `<apiUrl>/sts/exchange`.
 * Rejects with a WharfApiError (PERMISSION_DENIED when the token may not assume the identity).
 */
export function exchangeToken(
  apiUrl: string,
  presented: string,
  params: ExchangeParameters,
  fetchFn: FetchFunction = globalThis.fetch,
): Promise<IssuedToken> {
  const form = new URLSearchParams();
  for (const aud of params.audience ?? []) form.append("aud", aud);
  if (params.identity) form.set("identity", params.identity);
  for (const scope of params.scopes ?? []) form.append("scopes", scope);
  for (const cap of params.caps ?? []) form.append("cap", cap);
  if (params.createRefreshToken) form.set("create_refresh_token", "true");
  return sendForJson<IssuedToken>(fetchFn, new URL("/sts/exchange", apiUrl), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...bearer(presented) },
    body: form,
  });
}

/** What a refresh answers: the new access token and the refresh token that replaces the spent one. */
export interface RefreshedTokens {
  token: { token: string; expiry: string };
  refreshToken: { token: string; expiry: string };
}

/**
 * Spends `refreshToken` at `<apiUrl>/sts/exchange_refresh_token` for a new access token and its
 * successor refresh token (the old one must not be used again: reuse revokes the family).
 */
export function exchangeRefreshToken(
  apiUrl: string,
  refreshToken: string,
  fetchFn: FetchFunction = globalThis.fetch,
): Promise<RefreshedTokens> {
  return sendForJson<RefreshedTokens>(fetchFn, new URL("/sts/exchange_refresh_token", apiUrl), {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...bearer(refreshToken) },
    body: new URLSearchParams(),
  });
}

/** The public client configuration of a server (`/auth/v1/config`). */
export interface ServerConfig {
  issuer: string;
  apiUrl: string;
  /** "" while the registry is not listening. */
  registryUrl: string;
}

/** Reads `<apiUrl>/auth/v1/config` (no token needed). */
export async function fetchServerConfig(
  apiUrl: string,
  fetchFn: FetchFunction = globalThis.fetch,
): Promise<ServerConfig> {
  const body = await sendForJson<{ issuer: string; api_url: string; registry_url: string }>(
    fetchFn,
    new URL("/auth/v1/config", apiUrl),
    { method: "GET" },
  );
  return { issuer: body.issuer, apiUrl: body.api_url, registryUrl: body.registry_url };
}
