import { invalidArgument, permissionDenied, unavailable } from "../core/errors.js";
import { readBoundedBody } from "./bounded-fetch.js";
import { ExternalTokenError } from "./external-token-error.js";

/** What the login flow needs of an upstream OpenID Connect provider. */
export interface UpstreamOidc {
  /** The provider's authorization and token endpoints (from its discovery document, cached). */
  endpoints(issuer: string): Promise<{ authorizationEndpoint: string; tokenEndpoint: string }>;
  /**
   * Verifies an ID token of `issuer` for client `audience` (signature against the provider's JWKS,
   * asymmetric algorithms only, `iss`, `aud`, `exp`); resolves to its claims. Throws when invalid.
   */
  verifyIdToken(idToken: string, issuer: string, audience: string): Promise<Record<string, unknown>>;
}

/** Longest an upstream token endpoint may take to answer. */
const TOKEN_REQUEST_TIMEOUT_MS = 10_000;
/** Largest token response read. */
const MAX_TOKEN_RESPONSE_BYTES = 256 * 1024;

/**
 * Redeems an authorization code at the provider's token endpoint (RFC 6749 §4.1.3 with the PKCE
 * `code_verifier`). A confidential client authenticates with HTTP Basic (`client_secret_basic`,
 * the OIDC default); a public client sends only its `client_id`. Resolves to the `id_token`.
 * The provider's error text is never echoed back to the browser beyond its OAuth error code.
 */
export async function redeemAuthorizationCode(args: {
  tokenEndpoint: string;
  code: string;
  redirectUri: string;
  codeVerifier: string;
  clientId: string;
  clientSecret: string;
}): Promise<string> {
  const form = new URLSearchParams({
    grant_type: "authorization_code",
    code: args.code,
    redirect_uri: args.redirectUri,
    code_verifier: args.codeVerifier,
  });
  const headers: Record<string, string> = {
    "content-type": "application/x-www-form-urlencoded",
    accept: "application/json",
  };
  if (args.clientSecret === "") {
    form.set("client_id", args.clientId);
  } else {
    // RFC 6749 §2.3.1: form-urlencode id and secret before base64.
    const user = encodeURIComponent(args.clientId);
    const secret = encodeURIComponent(args.clientSecret);
    headers.authorization = `Basic ${Buffer.from(`${user}:${secret}`).toString("base64")}`;
  }
  let response: Response;
  try {
    response = await fetch(args.tokenEndpoint, {
      method: "POST",
      headers,
      body: form,
      redirect: "error",
      signal: AbortSignal.timeout(TOKEN_REQUEST_TIMEOUT_MS),
    });
  } catch {
    throw unavailable("the identity provider's token endpoint could not be reached");
  }
  let text: string;
  try {
    text = (await readBoundedBody(response, args.tokenEndpoint, MAX_TOKEN_RESPONSE_BYTES)).toString("utf8");
  } catch (err) {
    const reason = err instanceof ExternalTokenError ? err.message : "reading the answer failed";
    throw permissionDenied(`the identity provider's token endpoint: ${reason}`);
  }
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // handled below
  }
  if (!response.ok) {
    const code = typeof body.error === "string" ? body.error : `HTTP ${response.status}`;
    throw permissionDenied(`the identity provider refused the authorization code (${code})`);
  }
  if (typeof body.id_token !== "string" || body.id_token === "") {
    throw invalidArgument("id_token", "the identity provider returned no ID token (is `openid` allowed?)");
  }
  return body.id_token;
}
