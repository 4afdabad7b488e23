import { randomBytes } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { builtInRoleUid } from "../authz/built-in-roles.js";

/** Longest pull-token lifetime: 8760 h (a year). */
export const MAX_PULL_TOKEN_TTL_SECONDS = 8760 * 3600;
/** Default pull-token lifetime: 720 h (30 days). */
export const DEFAULT_PULL_TOKEN_TTL_SECONDS = 720 * 3600;
/** The `iss` of pull-token JWTs (any fixed string works: the identity pins it with its keys). */
export const PULL_TOKEN_ISSUER = "https://pull-tokens.wharf.invalid";

/** What `createPullToken` needs. */
export interface PullTokenRequest {
  /** The platform API (e.g. http://127.0.0.1:8080). */
  apiUrl: string;
  /** A platform API token allowed to create identities and role bindings at `parent`. */
  token: string;
  /** The organization (group uid) the pull token may pull from; its identity is created there. */
  parent: string;
  /** Lifetime in seconds (≤ 8760 h). Default 720 h. */
  ttlSeconds?: number;
  /** The identity's name (default `pull-token-<8 hex>`). */
  name?: string;
  /** Milliseconds now. Default Date.now. */
  now?: () => number;
}

/** A created pull token: Basic credentials for the registry. */
export interface PullToken {
  /** The identity's uid: the Basic username. */
  username: string;
  /** A JWT signed by a key only this call ever held: the Basic password. */
  password: string;
  registryUrl: string;
  /** RFC 3339. */
  expiry: string;
}

async function call(apiUrl: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${apiUrl}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: reported below
  }
  if (res.status !== 200) {
    throw new Error(`${method} ${path}: HTTP ${res.status} ${String(parsed.message ?? text).slice(0, 300)}`);
  }
  return parsed;
}

/**
 * Creates a pull token through the REST API: generates an ES256 key pair locally, creates a
 * static-keys identity under `parent` (issuer PULL_TOKEN_ISSUER, a random subject, the public key
 * set, expiration now + ttl, audience the registry URL read from `/auth/v1/config`), binds the
 * built-in `registry.pull` role to it at `parent`, and signs one JWT (iss, sub, aud = registry,
 * exp = now + ttl). The private key is then dropped: nobody can mint another. Revoke with
 * revokePullToken. If the binding fails, the identity (still unbound) is deleted again.
 */
export async function createPullToken(req: PullTokenRequest): Promise<PullToken> {
  const apiUrl = new URL(req.apiUrl).origin;
  const ttl = req.ttlSeconds ?? DEFAULT_PULL_TOKEN_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl <= 0 || ttl > MAX_PULL_TOKEN_TTL_SECONDS) {
    throw new RangeError(`the lifetime must be between 1 s and 8760h (got ${ttl} s)`);
  }
  const now = (req.now ?? Date.now)();
  const config = await call(apiUrl, "", "GET", "/auth/v1/config");
  const registryUrl = String(config.registry_url ?? "");
  if (!registryUrl) throw new Error("the server did not say where its registry is (/auth/v1/config)");
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const kid = randomBytes(8).toString("hex");
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: "ES256", use: "sig" };
  const subject = randomBytes(16).toString("hex");
  const exp = Math.floor(now / 1000) + ttl;
  const expiry = new Date(exp * 1000).toISOString();
  const identity = await call(apiUrl, req.token, "POST", `/iam/v2/identities/${req.parent}`, {
    name: req.name ?? `pull-token-${randomBytes(4).toString("hex")}`,
    description: `Pull token (expires ${expiry})`,
    staticKeys: {
      issuer: PULL_TOKEN_ISSUER,
      subject,
      issuerKeys: JSON.stringify({ keys: [publicJwk] }),
      expirationTime: expiry,
      audiences: [registryUrl],
    },
  });
  const uid = String(identity.uid);
  try {
    await call(apiUrl, req.token, "POST", `/iam/v2/roleBindings/${req.parent}`, {
      identityUid: uid,
      roleUid: builtInRoleUid("registry.pull"),
    });
  } catch (err) {
    await call(apiUrl, req.token, "DELETE", `/iam/v2/identities/${uid}`).catch(() => undefined);
    throw err;
  }
  const password = await new SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid, typ: "JWT" })
    .setIssuer(PULL_TOKEN_ISSUER)
    .setSubject(subject)
    .setAudience(registryUrl)
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(exp)
    .sign(privateKey);
  return { username: uid, password, registryUrl, expiry };
}

/** What `revokePullToken` needs. */
export interface PullTokenRevocation {
  /** The platform API (e.g. http://127.0.0.1:8080). */
  apiUrl: string;
  /** A platform API token allowed to delete role bindings and identities where the token lives. */
  token: string;
  /** The pull token's identity uid (its Basic username). */
  identityUid: string;
}

/** Most rounds of listing and deleting bindings before giving up (200 bindings a round). */
const MAX_REVOKE_ROUNDS = 50;

/**
 * Revokes a pull token (or any identity) through the REST API in the order the API requires: deletes
 * every role binding of the identity (access ends with the first commit; each is a
 * `rolebindings.deleted` event), then the identity. Resolves to the number of bindings deleted.
 * Throws on any API error, e.g. NOT_FOUND for an unknown identity, or FAILED_PRECONDITION when a
 * binding was created meanwhile (run it again).
 */
export async function revokePullToken(req: PullTokenRevocation): Promise<number> {
  const apiUrl = new URL(req.apiUrl).origin;
  const uid = encodeURIComponent(req.identityUid);
  // The identity must exist (and be visible to the caller) before anything is deleted.
  await call(apiUrl, req.token, "GET", `/iam/v2/identities/${req.identityUid}`);
  let deleted = 0;
  for (let round = 0; round < MAX_REVOKE_ROUNDS; round++) {
    const page = await call(apiUrl, req.token, "GET", `/iam/v2/roleBindings?identity=${uid}&page_size=200`);
    const bindings = (page.roleBindings ?? []) as { uid: string }[];
    if (bindings.length === 0) {
      await call(apiUrl, req.token, "DELETE", `/iam/v2/identities/${req.identityUid}`);
      return deleted;
    }
    for (const binding of bindings) {
      await call(apiUrl, req.token, "DELETE", `/iam/v2/roleBindings/${binding.uid}`);
      deleted++;
    }
  }
  throw new Error(`identity ${req.identityUid} still has role bindings after deleting ${deleted}`);
}
