import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import Provider, { type ClientMetadata, type Configuration } from "oidc-provider";

/**
 * A real OpenID Connect provider (`oidc-provider`) on 127.0.0.1:<free port>, for tests that need an
 * upstream issuer: discovery, JWKS, client_credentials with resource indicators (JWT access tokens
 * for a chosen audience), and the authorization-code flow with headless login and consent.
 *
 * Two peers started side by side have different issuers and keys: tokens of one must not pass as
 * the other's.
 */
export interface OidcPeer {
  /** The issuer URL (`http://127.0.0.1:<port>`), exactly as in its discovery document. */
  issuer: string;
  /** The provider, for anything the helpers below do not cover. */
  provider: Provider;
  /**
   * A real JWT access token from the client_credentials grant with resource indicator `audience`:
   * `iss` = the issuer, `sub` = the client id, `aud` = `audience`, signed with the current key, plus
   * the client's `tokenClaims` (see OidcPeerOptions.clients). `ttlSeconds` defaults to the peer's.
   */
  clientCredentialsToken(opts: { audience: string; clientId?: string }): Promise<string>;
  /**
   * Runs the authorization-code flow (with PKCE) for `accountId` through the headless login and
   * consent, and exchanges the code: returns the token endpoint's answer (`id_token`, whose `aud`
   * is the client id and which carries the account's claims for the requested scopes, and
   * `access_token`).
   */
  login(opts: {
    accountId: string;
    clientId?: string;
    scope?: string;
    redirectUri?: string;
    nonce?: string;
  }): Promise<{ id_token: string; access_token: string; [k: string]: unknown }>;
  /**
   * Follows redirects from `url` (an authorization request, or any peer URL) with a cookie jar
   * through the peer's headless login and consent, and returns the first URL off the peer (the
   * client's redirect_uri with `code`, `state` or `error`). The account logged in is the request's
   * `login_hint`, else `defaultAccount`.
   */
  followAuthorization(url: string): Promise<URL>;
  /** How many requests the peer served on `path` (e.g. "/jwks", "/.well-known/openid-configuration"). */
  requests(path: string): number;
  /** Replaces the signing key (the old one is no longer published): the JWKS changes, kid too. */
  rotateKeys(): Promise<void>;
  /** The private signing key now in use (to forge tokens that carry the peer's current kid). */
  currentKey(): { privateJwk: JWK; kid: string };
  close(): Promise<void>;
}

/** One client of the peer. */
export interface PeerClient {
  clientId: string;
  /** Default: "secret-<clientId>" (client_secret_basic). */
  clientSecret?: string;
  /** Default: [`http://127.0.0.1/callback`]. */
  redirectUris?: string[];
  /** Claims added to the access tokens of this client (client_credentials), e.g. CI job claims. */
  tokenClaims?: Record<string, unknown>;
}

export interface OidcPeerOptions {
  /** Default: one client `ci` with tokenClaims `{repository: "acme/app", ref: "refs/heads/main"}`. */
  clients?: PeerClient[];
  /** accountId → claims (`email`, `email_verified`, `name`, `groups`, …). Default: `alice` in groups `dev`. */
  accounts?: Record<string, Record<string, unknown>>;
  /** The account logged in when an authorization request has no login_hint. Default: the first. */
  defaultAccount?: string;
  /** Lifetime of access and ID tokens in seconds. Default 3600. */
  tokenTtlSeconds?: number;
  /** Signing algorithm of the peer's key. Default ES256. */
  alg?: "ES256" | "RS256";
}

const DEFAULT_REDIRECT = "http://127.0.0.1/callback";

async function signingKey(alg: "ES256" | "RS256"): Promise<JWK> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, alg, use: "sig", kid: randomBytes(8).toString("hex") };
}

/** Starts a peer; `close()` it in `after`. */
export async function startOidcPeer(options: OidcPeerOptions = {}): Promise<OidcPeer> {
  const alg = options.alg ?? "ES256";
  const ttl = options.tokenTtlSeconds ?? 3600;
  const clients = options.clients ?? [
    { clientId: "ci", tokenClaims: { repository: "acme/app", ref: "refs/heads/main" } },
  ];
  const accounts = options.accounts ?? {
    alice: { email: "alice@example.com", email_verified: true, name: "Alice", groups: ["dev"] },
  };
  const defaultAccount = options.defaultAccount ?? Object.keys(accounts)[0] ?? "alice";
  const counts = new Map<string, number>();
  let key = await signingKey(alg);
  let provider: Provider | undefined;
  let issuer = "";

  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://peer").pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    if (path.startsWith("/interaction/")) {
      interaction(req, res).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
      return;
    }
    provider?.callback()(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const clientMetadata = (c: PeerClient): ClientMetadata => ({
    client_id: c.clientId,
    client_secret: c.clientSecret ?? `secret-${c.clientId}`,
    grant_types: ["client_credentials", "authorization_code", "refresh_token"],
    response_types: ["code"],
    redirect_uris: c.redirectUris ?? [DEFAULT_REDIRECT],
    token_endpoint_auth_method: "client_secret_basic",
    id_token_signed_response_alg: alg,
  });
  const claimsOfClient = new Map(clients.map((c) => [c.clientId, c.tokenClaims ?? {}]));

  function build(): Provider {
    const configuration: Configuration = {
      clients: clients.map(clientMetadata),
      jwks: { keys: [key] as never },
      cookies: { keys: ["oidc-peer-cookie-key"] },
      conformIdTokenClaims: false,
      claims: {
        openid: ["sub"],
        email: ["email", "email_verified"],
        profile: ["name", "preferred_username"],
        groups: ["groups"],
      },
      scopes: ["openid", "offline_access", "email", "profile", "groups", "api"],
      findAccount: async (_ctx, sub) =>
        accounts[sub] ? { accountId: sub, claims: async () => ({ sub, ...accounts[sub] }) } : undefined,
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: async () => undefined,
          useGrantedResource: async () => true,
          getResourceServerInfo: async (_ctx, resource) => ({
            scope: "api",
            audience: resource,
            accessTokenTTL: ttl,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg } },
          }),
        },
      },
      extraTokenClaims: async (_ctx, token) =>
        token.kind === "ClientCredentials" ? { ...claimsOfClient.get(token.clientId ?? "") } : undefined,
      interactions: { url: async (_ctx, i) => `/interaction/${i.uid}` },
      ttl: {
        AccessToken: ttl,
        ClientCredentials: ttl,
        IdToken: ttl,
        AuthorizationCode: 60,
        Interaction: 600,
        Session: 3600,
        Grant: 3600,
        RefreshToken: 86400,
      },
      pkce: { required: () => true },
    };
    const p = new Provider(issuer, configuration);
    return p;
  }
  provider = build();

  async function interaction(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const p = provider as Provider;
    const details = await p.interactionDetails(req, res);
    if (details.prompt.name === "login") {
      const hint = typeof details.params.login_hint === "string" ? details.params.login_hint : undefined;
      const accountId = hint ?? defaultAccount;
      await p.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
      return;
    }
    const accountId = details.session?.accountId ?? defaultAccount;
    const clientId = String(details.params.client_id);
    const grant = details.grantId
      ? ((await p.Grant.find(details.grantId)) ?? new p.Grant({ accountId, clientId }))
      : new p.Grant({ accountId, clientId });
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(resource, scopes.join(" "));
    }
    const grantId = await grant.save();
    await p.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  async function followAuthorization(start: string): Promise<URL> {
    const jar = new Map<string, string>();
    let url = new URL(start, issuer);
    for (let hop = 0; hop < 20; hop++) {
      if (url.origin !== issuer) return url;
      const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
      const res = await fetch(url, { redirect: "manual", headers: cookie ? { cookie } : {} });
      for (const set of res.headers.getSetCookie()) {
        const [pair = ""] = set.split(";");
        const eq = pair.indexOf("=");
        const name = pair.slice(0, eq).trim();
        const value = pair.slice(eq + 1).trim();
        if (/expires=Thu, 01 Jan 1970/i.test(set) || value === "") jar.delete(name);
        else jar.set(name, value);
      }
      await res.arrayBuffer();
      const location = res.headers.get("location");
      if (res.status < 300 || res.status >= 400 || !location) {
        throw new Error(`authorization stopped at ${url.pathname} with HTTP ${res.status}`);
      }
      url = new URL(location, url);
    }
    throw new Error("authorization redirected too many times");
  }

  function basicAuth(clientId: string): string {
    const client = clients.find((c) => c.clientId === clientId);
    if (!client) throw new Error(`the peer has no client ${clientId}`);
    const secret = client.clientSecret ?? `secret-${clientId}`;
    return `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`;
  }

  async function tokenRequest(
    clientId: string,
    form: Record<string, string>,
  ): Promise<Record<string, unknown>> {
    const res = await fetch(`${issuer}/token`, {
      method: "POST",
      headers: { authorization: basicAuth(clientId), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(form),
    });
    const body = (await res.json()) as Record<string, unknown>;
    if (res.status !== 200) throw new Error(`token endpoint: HTTP ${res.status} ${JSON.stringify(body)}`);
    return body;
  }

  return {
    issuer,
    get provider() {
      return provider as Provider;
    },
    async clientCredentialsToken({ audience, clientId = clients[0]?.clientId ?? "ci" }) {
      const body = await tokenRequest(clientId, { grant_type: "client_credentials", resource: audience });
      return String(body.access_token);
    },
    async login({ accountId, clientId = clients[0]?.clientId ?? "ci", scope, redirectUri, nonce }) {
      const client = clients.find((c) => c.clientId === clientId);
      const redirect = redirectUri ?? client?.redirectUris?.[0] ?? DEFAULT_REDIRECT;
      const verifier = randomBytes(32).toString("base64url");
      const challenge = createHash("sha256").update(verifier).digest("base64url");
      const params = new URLSearchParams({
        client_id: clientId,
        response_type: "code",
        redirect_uri: redirect,
        scope: scope ?? "openid email profile groups",
        code_challenge: challenge,
        code_challenge_method: "S256",
        login_hint: accountId,
        state: randomBytes(8).toString("hex"),
        nonce: nonce ?? randomBytes(8).toString("hex"),
      });
      const back = await followAuthorization(`${issuer}/auth?${params}`);
      const code = back.searchParams.get("code");
      if (!code) throw new Error(`authorization failed: ${back.search}`);
      const body = await tokenRequest(clientId, {
        grant_type: "authorization_code",
        code,
        redirect_uri: redirect,
        code_verifier: verifier,
      });
      return body as { id_token: string; access_token: string };
    },
    followAuthorization,
    requests: (path) => counts.get(path) ?? 0,
    async rotateKeys() {
      key = await signingKey(alg);
      provider = build();
    },
    currentKey: () => ({ privateJwk: key, kid: String(key.kid) }),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
