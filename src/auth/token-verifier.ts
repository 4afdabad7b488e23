import { type CryptoKey, decodeProtectedHeader, errors, type JWTPayload, jwtVerify } from "jose";
import { ADMIN_IDENTITY_UID } from "../authz/admin-identity.js";
import type { Clock } from "../core/clock.js";
import type { Principal } from "../core/context.js";
import { unauthenticated } from "../core/errors.js";
import { isUidp } from "../core/uidp.js";
import type { Store } from "../storage/store.js";
import type { Issuer } from "./issuer.js";
import { createSigningKeyRing, SIGNING_ALG, type SigningKeyRing } from "./signing-keys.js";
import { MAX_CLOCK_TOLERANCE_SECONDS } from "./token-limits.js";
import type { RevocationChecker } from "./token-revocations.js";
import { describeVerificationError, UnknownSigningKey } from "./verification-errors.js";
import { createVerifiedTokenCache } from "./verified-token-cache.js";

/**
 * ErrorInfo reason of the UNAUTHENTICATED error for a genuine token issued for another audience
 * (the registry answers those with 403, as the spec says, rather than a 401 challenge).
 */
export const WRONG_AUDIENCE = "WRONG_AUDIENCE";

/** Seconds of clock skew tolerated by default, and at most on `iat` (see `authenticate`). */
const DEFAULT_CLOCK_TOLERANCE_SECONDS = 30;

/** Tokens longer than this are refused before any parsing. */
const MAX_TOKEN_LENGTH = 16 * 1024;

/** Turns a bearer token of Wharf's issuer into the caller's Principal. */
export interface TokenVerifier {
  /**
   * Verifies `token` (a compact JWS): signature by one of the issuer's stored keys, `alg` ES256
   * only, `iss` equal to the issuer URL, `aud` containing one of the accepted audiences, `exp`
   * present and not passed, `nbf` (when present) reached, both with the clock tolerance, `iat` not
   * in the future (by at most that tolerance, and never more than 30 s), `sub` a
   * valid identity uidp, and no revocation matching its `sub` and `iat`. A verified token is
   * remembered until its `exp`, so presenting it again costs no signature check (the revocation
   * check runs on every call: two map lookups). Throws UNAUTHENTICATED describing what failed
   * (never key material).
   */
  authenticate(token: string): Promise<Principal>;
  /** Counters for metrics: signature verifications performed, cache hits, tokens cached now. */
  stats(): { verifications: number; cacheHits: number; cached: number };
}

/**
 * Creates a verifier. Keys come from `keys`, else `issuer.keys`, else a ring over
 * `store.signingKeys` (an unknown `kid` re-reads the store, so a key rotated in by another process
 * verifies). `issuerUrl` defaults to `issuer.issuerUrl`; `adminUid` to the built-in administrator.
 */
export function createTokenVerifier(opts: {
  audience: string | readonly string[];
  clock: Clock;
  issuer?: Issuer;
  store?: Pick<Store, "signingKeys">;
  keys?: SigningKeyRing;
  issuerUrl?: string;
  adminUid?: string;
  /** Seconds of clock skew tolerated on `exp` and `nbf`, at most MAX_CLOCK_TOLERANCE_SECONDS. Default 30. */
  clockToleranceSeconds?: number;
  /** Withdrawn tokens (`wharf admin tokens revoke`); without it nothing is ever revoked. */
  revocations?: RevocationChecker;
  /** Most verified tokens remembered at once. Default 10,000. */
  maxCachedTokens?: number;
  /**
   * A `sub` accepted besides identity uids, for tokens the issuer mints to nobody in particular
   * (the registry's anonymous pull tokens). Such a principal holds no role bindings.
   */
  anonymousSubject?: string;
}): TokenVerifier {
  const { clock } = opts;
  const keys =
    opts.keys ??
    opts.issuer?.keys ??
    (opts.store ? createSigningKeyRing({ signingKeys: opts.store.signingKeys, clock }) : undefined);
  const issuerUrl = (opts.issuerUrl ?? opts.issuer?.issuerUrl)?.replace(/\/+$/, "");
  if (!keys || !issuerUrl)
    throw new TypeError("createTokenVerifier needs keys (issuer, keys or store) and issuerUrl");
  const audience = typeof opts.audience === "string" ? [opts.audience] : [...opts.audience];
  const adminUid = opts.adminUid ?? ADMIN_IDENTITY_UID;
  const clockTolerance = opts.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS;
  if (!(clockTolerance >= 0 && clockTolerance <= MAX_CLOCK_TOLERANCE_SECONDS)) {
    // Key retirement and revocation pruning assume no verifier accepts a token longer than this.
    throw new TypeError(`clockToleranceSeconds must be 0 to ${MAX_CLOCK_TOLERANCE_SECONDS}`);
  }
  const issuedAtTolerance = Math.min(clockTolerance, DEFAULT_CLOCK_TOLERANCE_SECONDS);
  const { revocations } = opts;
  const cache = createVerifiedTokenCache<Principal>(opts.maxCachedTokens ?? 10_000);
  const inFlight = new Map<string, Promise<Principal>>();
  let verifications = 0;
  let cacheHits = 0;

  async function resolveKey(header: { kid?: unknown }): Promise<CryptoKey> {
    const key = typeof header.kid === "string" ? await keys?.verificationKey(header.kid) : undefined;
    if (!key) throw new UnknownSigningKey();
    return key;
  }

  async function verify(token: string): Promise<Principal> {
    try {
      decodeProtectedHeader(token);
    } catch {
      throw unauthenticated("token is malformed");
    }
    let payload: JWTPayload;
    try {
      verifications++;
      ({ payload } = await jwtVerify(token, resolveKey, {
        algorithms: [SIGNING_ALG],
        issuer: issuerUrl,
        audience,
        clockTolerance,
        currentDate: new Date(clock.now()),
        requiredClaims: ["sub", "exp", "iat"],
      }));
    } catch (err) {
      const message = describeVerificationError(err, { issuerUrl: issuerUrl ?? "", audience });
      throw isAudienceError(err) ? unauthenticated(message, WRONG_AUDIENCE) : unauthenticated(message);
    }
    // Revocations match on `iat` and key retirement counts from it: a token dated in the future
    // would outlive both, so it is refused like one not yet valid, whatever tolerance `exp` gets.
    if ((payload.iat ?? 0) > Math.floor(clock.now() / 1000) + issuedAtTolerance) {
      throw unauthenticated("token is not yet valid (issued in the future)");
    }
    const sub = payload.sub ?? "";
    if (!isUidp(sub) && (opts.anonymousSubject === undefined || sub !== opts.anonymousSubject)) {
      throw unauthenticated("token subject is not an identity uid");
    }
    const principal: Principal = {
      identityUid: sub,
      isAdmin: sub === adminUid,
      claims: Object.freeze({ ...payload }),
    };
    cache.set(token, principal, (payload.exp ?? 0) * 1000, clock.now());
    return principal;
  }

  function unlessRevoked(principal: Principal): Principal {
    if (revocations?.isRevoked(principal.identityUid, Number(principal.claims.iat) * 1000)) {
      throw unauthenticated("token has been revoked");
    }
    return principal;
  }

  return {
    async authenticate(token) {
      if (typeof token !== "string" || token === "") throw unauthenticated("no bearer token");
      if (token.length > MAX_TOKEN_LENGTH) throw unauthenticated("token is too large");
      const hit = cache.get(token, clock.now());
      if (hit) {
        cacheHits++;
        return unlessRevoked(hit);
      }
      let pending = inFlight.get(token);
      if (!pending) {
        pending = verify(token).finally(() => inFlight.delete(token));
        inFlight.set(token, pending);
      }
      return unlessRevoked(await pending);
    },
    stats: () => ({ verifications, cacheHits, cached: cache.size }),
  };
}

function isAudienceError(err: unknown): boolean {
  return err instanceof errors.JWTClaimValidationFailed && err.claim === "aud";
}
