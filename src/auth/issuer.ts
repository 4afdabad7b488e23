import { randomUUID } from "node:crypto";
import { type JSONWebKeySet, SignJWT } from "jose";
import type { Clock } from "../core/clock.js";
import type { Store } from "../storage/store.js";
import { type OpenIdConfiguration, openIdConfiguration } from "./discovery.js";
import { createSigningKeyRing, SIGNING_ALG, type SigningKeyRing } from "./signing-keys.js";
import { MAX_TOKEN_TTL_SECONDS } from "./token-limits.js";

/** What to put in a token besides the registered claims the issuer sets itself. */
export interface MintOptions {
  /** `sub`: the identity uid (or e.g. `webhook:<uid>` for webhook deliveries). */
  subject: string;
  /** `aud`: the service(s) the token is for. */
  audience: string | readonly string[];
  /** Lifetime in whole seconds, 1 to MAX_TOKEN_TTL_SECONDS (24 h); `exp` = `iat` + this. */
  ttlSeconds: number;
  /** More claims, e.g. `act`, `scope`, `cap`, `webhook.digest`. May not set a registered claim. */
  extraClaims?: Readonly<Record<string, unknown>>;
}

/** Wharf's own OIDC issuer: mints ES256 JWTs and publishes their verification keys. */
export interface Issuer {
  /** The `iss` of every token, without a trailing slash. */
  readonly issuerUrl: string;
  /** The key ring the issuer signs with; share it with the verifier of the same process. */
  readonly keys: SigningKeyRing;
  /**
   * Signs a JWT (header `alg` ES256, `kid`, `typ` JWT) with claims `iss`, `sub`, `aud`, `iat`,
   * `exp`, a random `jti`, then `extraClaims`. Creates the first signing key when none exists.
   * Throws TypeError for a non-positive, fractional or longer than MAX_TOKEN_TTL_SECONDS ttl (key
   * retirement and revocation pruning rely on that bound) or a registered claim in `extraClaims`.
   */
  mint(opts: MintOptions): Promise<string>;
  /** The public key set (`/.well-known/jwks.json`): every key not yet retired, newest first. */
  jwks(): Promise<JSONWebKeySet>;
  /** The OpenID Provider metadata (`/.well-known/openid-configuration`). */
  discovery(): OpenIdConfiguration;
}

const REGISTERED_CLAIMS = new Set(["iss", "sub", "aud", "iat", "exp", "nbf", "jti"]);

/**
 * Creates the issuer. `issuerUrl` is the public base URL of the token issuer (`{auth_url}`); a
 * trailing slash is dropped. Pass `keys` to share a key ring; otherwise one is made over
 * `store.signingKeys`.
 */
export function createIssuer(opts: {
  store: Pick<Store, "signingKeys">;
  issuerUrl: string;
  clock: Clock;
  keys?: SigningKeyRing;
}): Issuer {
  const issuerUrl = opts.issuerUrl.replace(/\/+$/, "");
  const { clock } = opts;
  const keys = opts.keys ?? createSigningKeyRing({ signingKeys: opts.store.signingKeys, clock });
  const metadata = openIdConfiguration(issuerUrl);

  return {
    issuerUrl,
    keys,
    async mint({ subject, audience, ttlSeconds, extraClaims = {} }) {
      if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0 || ttlSeconds > MAX_TOKEN_TTL_SECONDS) {
        throw new TypeError(
          `ttlSeconds must be an integer from 1 to ${MAX_TOKEN_TTL_SECONDS}, got ${ttlSeconds}`,
        );
      }
      for (const claim of Object.keys(extraClaims)) {
        if (REGISTERED_CLAIMS.has(claim)) throw new TypeError(`extraClaims may not set "${claim}"`);
      }
      const { kid, privateKey } = await keys.current();
      const iat = Math.floor(clock.now() / 1000);
      return new SignJWT({ ...extraClaims })
        .setProtectedHeader({ alg: SIGNING_ALG, kid, typ: "JWT" })
        .setIssuer(issuerUrl)
        .setSubject(subject)
        .setAudience(typeof audience === "string" ? audience : [...audience])
        .setIssuedAt(iat)
        .setExpirationTime(iat + ttlSeconds)
        .setJti(randomUUID())
        .sign(privateKey);
    },
    async jwks() {
      return { keys: await keys.publicJwks() };
    },
    discovery: () => metadata,
  };
}
