import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  decodeJwt,
  decodeProtectedHeader,
  errors,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
  jwtVerify,
  type ProtectedHeaderParameters,
} from "jose";
import { setBounded } from "../core/bounded-map.js";
import type { Clock } from "../core/clock.js";
import { boundedGet, type FetchLimits } from "./bounded-fetch.js";
import { ExternalTokenError } from "./external-token-error.js";
import { createOidcDiscovery, type OidcDiscovery, type OidcDiscoveryOptions } from "./oidc-discovery.js";

export { ExternalTokenError } from "./external-token-error.js";

/**
 * Signature algorithms accepted on external tokens: asymmetric only. Never `none`, never HS*
 * (an HMAC "signed" with an issuer's public key must not verify).
 */
export const ALLOWED_ALGORITHMS: readonly string[] = Object.freeze([
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
]);

/** Longest token accepted, before any parsing. */
export const MAX_EXTERNAL_TOKEN_LENGTH = 16 * 1024;

/** What the token's `aud` must contain: one exact value, any of several, or a value passing a test. */
export type AudienceExpectation = string | readonly string[] | ((aud: string) => boolean);

/** A token decoded but NOT verified: use it to pick the trusted issuer, never as proof of anything. */
export interface UnverifiedToken {
  header: ProtectedHeaderParameters;
  claims: JWTPayload;
}

/** A verified external token. `claims.iss`, `claims.sub` and `claims.exp` are always present. */
export interface VerifiedExternalToken {
  header: ProtectedHeaderParameters;
  claims: JWTPayload & { iss: string; sub: string; exp: number };
  /** The `aud` claim as a list. */
  audience: string[];
}

/** Verifies JWTs of upstream OIDC issuers (CI systems, identity providers, static-key issuers). */
export interface ExternalTokenVerifier {
  /**
   * Decodes `token` without verifying its signature, and refuses what no verification could
   * accept: not a compact JWS, an algorithm outside ALLOWED_ALGORITHMS, no `iss`/`sub`, no `exp`
   * or `exp` passed, `nbf` or `iat` in the future (each with the clock tolerance). Makes no network
   * request. Callers use the result to decide which configured issuer to trust (e.g. from an
   * identity's claimMatch) BEFORE calling `verify`. Throws ExternalTokenError.
   */
  inspect(token: string): UnverifiedToken;
  /**
   * Fully verifies `token` as issued by `expect.issuer`, an issuer the CALLER trusts (from its own
   * configuration, never from the token): the `inspect` checks; the issuer's discovery document
   * (`<issuer>/.well-known/openid-configuration`, whose `issuer` must equal it exactly; cached)
   * and key set (its `jwks_uri`, cached and refetched, at most once per cooldown, when the token
   * names an unknown `kid`); the signature with an allowed algorithm; `iss` equal to the issuer;
   * `aud` matching `expect.audience`; `exp`/`nbf`/`iat` with the tolerance; and `expect.subject`
   * when given. Issuer and key-set URLs must be https (http only on loopback hosts, unless the
   * verifier allows http). Fetches are bounded in time and size. Throws ExternalTokenError
   * (`unavailable` when the issuer could not be reached).
   */
  verify(
    token: string,
    expect: { issuer: string; audience: AudienceExpectation; subject?: string },
  ): Promise<VerifiedExternalToken>;
  /**
   * Like `verify`, with keys registered in Wharf (a static-keys identity's JWKS) instead of
   * fetched ones: no network request at all.
   */
  verifyWithKeys(
    token: string,
    jwks: JSONWebKeySet,
    expect: { issuer: string; audience: AudienceExpectation; subject?: string },
  ): Promise<VerifiedExternalToken>;
  /** The discovery cache (the login flow reads authorization/token endpoints from it). */
  readonly discovery: OidcDiscovery;
}

/** Options of {@link createExternalTokenVerifier}. */
export interface ExternalTokenVerifierOptions extends FetchLimits {
  clock: Clock;
  /** Seconds of clock skew tolerated on `exp`, `nbf` and `iat`. Default 30. */
  clockToleranceSeconds?: number;
  /** Accept http issuers on any host (default: https, or http on loopback hosts only). */
  allowHttpIssuers?: boolean;
  /** How long discovery documents are used. Default 10 minutes. */
  discoveryTtlMs?: number;
  /** Key sets are refetched after this long even without an unknown kid. Default 10 minutes. */
  jwksMaxAgeMs?: number;
  /** Least time between two key-set fetches caused by unknown kids. Default 30 s. */
  jwksCooldownMs?: number;
  /** Most upstream key sets kept. Default 1,000. */
  maxKeySets?: number;
}

/** Creates a verifier. One per process: its caches are what make repeated exchanges cheap. */
export function createExternalTokenVerifier(opts: ExternalTokenVerifierOptions): ExternalTokenVerifier {
  const { clock } = opts;
  const tolerance = opts.clockToleranceSeconds ?? 30;
  const limits: FetchLimits = {};
  if (opts.timeoutMs !== undefined) limits.timeoutMs = opts.timeoutMs;
  if (opts.maxBytes !== undefined) limits.maxBytes = opts.maxBytes;
  if (opts.fetch !== undefined) limits.fetch = opts.fetch;
  const discoveryOptions: OidcDiscoveryOptions = { ...limits, now: () => clock.now() };
  if (opts.discoveryTtlMs !== undefined) discoveryOptions.ttlMs = opts.discoveryTtlMs;
  if (opts.allowHttpIssuers !== undefined) discoveryOptions.allowHttp = opts.allowHttpIssuers;
  const discovery = createOidcDiscovery(discoveryOptions);
  const keySets = new Map<string, JWTVerifyGetKey>();
  const maxKeySets = opts.maxKeySets ?? 1000;

  function remoteKeys(jwksUri: string): JWTVerifyGetKey {
    let keys = keySets.get(jwksUri);
    if (!keys) {
      keys = createRemoteJWKSet(new URL(jwksUri), {
        timeoutDuration: limits.timeoutMs ?? 5000,
        cooldownDuration: opts.jwksCooldownMs ?? 30_000,
        cacheMaxAge: opts.jwksMaxAgeMs ?? 10 * 60 * 1000,
        [customFetch]: (url, init) => boundedGet(url, limits, init.signal),
      });
      setBounded(keySets, jwksUri, keys, maxKeySets);
    }
    return keys;
  }

  function inspect(token: string): UnverifiedToken {
    if (typeof token !== "string" || token === "") throw new ExternalTokenError("no token");
    if (token.length > MAX_EXTERNAL_TOKEN_LENGTH) throw new ExternalTokenError("token is too large");
    let header: ProtectedHeaderParameters;
    let claims: JWTPayload;
    try {
      header = decodeProtectedHeader(token);
      claims = decodeJwt(token);
    } catch {
      throw new ExternalTokenError("token is malformed");
    }
    if (token.split(".").length !== 3) throw new ExternalTokenError("token is malformed");
    if (typeof header.alg !== "string" || !ALLOWED_ALGORITHMS.includes(header.alg)) {
      throw new ExternalTokenError(
        `token signing algorithm ${JSON.stringify(String(header.alg).slice(0, 20))} is not allowed`,
      );
    }
    if (typeof claims.iss !== "string" || claims.iss === "")
      throw new ExternalTokenError('token has no "iss" claim');
    if (typeof claims.sub !== "string" || claims.sub === "")
      throw new ExternalTokenError('token has no "sub" claim');
    const now = Math.floor(clock.now() / 1000);
    if (typeof claims.exp !== "number") throw new ExternalTokenError('token has no "exp" claim');
    if (claims.exp <= now - tolerance) throw new ExternalTokenError("token has expired");
    if (typeof claims.nbf === "number" && claims.nbf > now + tolerance) {
      throw new ExternalTokenError("token is not yet valid");
    }
    if (claims.iat !== undefined && (typeof claims.iat !== "number" || claims.iat > now + tolerance)) {
      throw new ExternalTokenError("token was issued in the future");
    }
    return { header, claims };
  }

  async function verifyWith(
    token: string,
    keys: JWTVerifyGetKey,
    expect: { issuer: string; audience: AudienceExpectation; subject?: string },
  ): Promise<VerifiedExternalToken> {
    let result: Awaited<ReturnType<typeof jwtVerify>>;
    try {
      result = await jwtVerify(token, keys, {
        algorithms: [...ALLOWED_ALGORITHMS],
        issuer: expect.issuer,
        clockTolerance: tolerance,
        currentDate: new Date(clock.now()),
        requiredClaims: ["iss", "sub", "exp", "aud"],
        ...(expect.subject === undefined ? {} : { subject: expect.subject }),
      });
    } catch (err) {
      throw describe(err, expect.issuer);
    }
    const claims = result.payload as VerifiedExternalToken["claims"];
    const audience = audienceOf(claims.aud);
    if (!audience.some((aud) => audienceMatches(expect.audience, aud))) {
      throw new ExternalTokenError(`token audience does not include ${describeAudience(expect.audience)}`);
    }
    return { header: result.protectedHeader, claims, audience };
  }

  return {
    inspect,
    discovery,
    async verify(token, expect) {
      inspect(token);
      const metadata = await discovery.get(expect.issuer);
      return verifyWith(token, remoteKeys(metadata.jwks_uri), expect);
    },
    async verifyWithKeys(token, jwks, expect) {
      inspect(token);
      let keys: JWTVerifyGetKey;
      try {
        keys = createLocalJWKSet(jwks);
      } catch {
        throw new ExternalTokenError("the registered issuer keys are not a valid key set");
      }
      return verifyWith(token, keys, expect);
    },
  };
}

/** The `aud` claim as a list (absent or malformed → empty). */
export function audienceOf(aud: unknown): string[] {
  if (typeof aud === "string") return [aud];
  if (Array.isArray(aud)) return aud.filter((a): a is string => typeof a === "string");
  return [];
}

function audienceMatches(expected: AudienceExpectation, aud: string): boolean {
  if (typeof expected === "string") return aud === expected;
  if (typeof expected === "function") return expected(aud);
  return expected.includes(aud);
}

function describeAudience(expected: AudienceExpectation): string {
  if (typeof expected === "string") return expected;
  if (typeof expected === "function") return "an accepted audience";
  return expected.join(" or ");
}

/** A caller-safe ExternalTokenError for a jose (or fetch) failure. */
function describe(err: unknown, issuer: string): ExternalTokenError {
  if (err instanceof ExternalTokenError) return err;
  if (err instanceof errors.JWKSNoMatchingKey) {
    return new ExternalTokenError(`token is signed by a key ${issuer} does not publish`);
  }
  if (err instanceof errors.JWKSTimeout) {
    return new ExternalTokenError(`fetching the keys of ${issuer} timed out`, { unavailable: true });
  }
  if (err instanceof errors.JWKSInvalid || err instanceof errors.JWKSMultipleMatchingKeys) {
    return new ExternalTokenError(`the key set of ${issuer} cannot select one verification key`);
  }
  if (err instanceof errors.JWTExpired) return new ExternalTokenError("token has expired");
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "iss") return new ExternalTokenError(`token issuer is not ${issuer}`);
    if (err.claim === "sub") return new ExternalTokenError("token subject does not match");
    if (err.claim === "nbf") return new ExternalTokenError("token is not yet valid");
    if (err.reason === "missing") return new ExternalTokenError(`token has no "${err.claim}" claim`);
    return new ExternalTokenError(`token claim "${err.claim}" is invalid`);
  }
  if (err instanceof errors.JOSEAlgNotAllowed || err instanceof errors.JOSENotSupported) {
    return new ExternalTokenError("token signing algorithm is not allowed");
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) {
    return new ExternalTokenError("token signature is invalid");
  }
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) {
    return new ExternalTokenError("token is malformed");
  }
  if (err instanceof errors.JOSEError) {
    // jose's own fetch failures (non-200, bad JSON) of the key set.
    return new ExternalTokenError(`the key set of ${issuer} could not be loaded`, { unavailable: true });
  }
  return new ExternalTokenError("token could not be verified");
}
