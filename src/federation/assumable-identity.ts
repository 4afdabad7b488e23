import type { JSONWebKeySet, JWTPayload } from "jose";
import { compilePattern } from "../core/validation.js";
import {
  audienceOf,
  ExternalTokenError,
  type ExternalTokenVerifier,
  type VerifiedExternalToken,
} from "../oidc/external-token-verifier.js";
import type { ClaimMatchData, IdentityRow, StaticKeysData } from "../storage/iam-store.js";

/**
 * Deciding whether a presented token may assume an identity. The identity (from Wharf's store)
 * decides which issuer is trusted and which keys verify; the token's unverified claims are only
 * compared against it, so nothing the token names is fetched unless the identity already trusts it.
 */

/** Refusal for "no such identity" and "the token does not match it": one answer for both. */
export class IdentityMismatch extends ExternalTokenError {
  constructor(identityUid: string) {
    super(`token does not match identity ${identityUid}`);
    this.name = "IdentityMismatch";
  }
}

/** What an assumption needs besides the token and the identity. */
export interface AssumptionContext {
  verifier: ExternalTokenVerifier;
  /** Wharf's issuer URL: the default audience of claimMatch and staticKeys identities. */
  wharfIssuerUrl: string;
  /** Milliseconds now (static-keys expiration). */
  now: number;
}

/**
 * Verifies that `token` may assume `identity` (undefined = no such identity) and returns the
 * verified token. Throws IdentityMismatch (the same for a missing identity, one without a
 * relationship, and any claim that does not match) or another ExternalTokenError (expired,
 * bad signature, unknown key, unreachable issuer...).
 *
 * - claimMatch: `iss` equal to `issuer` or matching `issuerPattern` (anchored), `sub` likewise,
 *   `aud` containing `audience` / a value matching `audiencePattern` / else Wharf's issuer URL,
 *   each `claims` entry equal and each `claimPatterns` entry matching (a list claim matches when
 *   one element does; numbers and booleans compare as their JSON text). Then the token is verified
 *   against that issuer's discovery document and key set.
 * - staticKeys: `iss` and `sub` exactly, verified with the registered `issuerKeys` (no fetch),
 *   `aud` in `audiences` when set, else Wharf's issuer URL (or `audience` when given, which must
 *   also be allowed by the identity), and the identity's `expirationTime` not passed.
 */
export async function verifyAssumption(
  token: string,
  identityUid: string,
  identity: IdentityRow | undefined,
  ctx: AssumptionContext & { audience?: string },
): Promise<VerifiedExternalToken> {
  const { claims } = ctx.verifier.inspect(token);
  if (identity?.claimMatch && ctx.audience === undefined) {
    return verifyClaimMatch(token, claims, identityUid, identity.claimMatch, ctx);
  }
  if (identity?.staticKeys) return verifyStaticKeys(token, claims, identityUid, identity.staticKeys, ctx);
  throw new IdentityMismatch(identityUid);
}

async function verifyClaimMatch(
  token: string,
  unverified: JWTPayload,
  identityUid: string,
  match: ClaimMatchData,
  ctx: AssumptionContext,
): Promise<VerifiedExternalToken> {
  const iss = String(unverified.iss);
  const audience = audienceMatcher(match, ctx.wharfIssuerUrl);
  if (!claimsMatch(match, unverified, audience)) throw new IdentityMismatch(identityUid);
  // The identity trusts `iss` (exactly, or through its pattern): only now is it fetched.
  const verified = await ctx.verifier.verify(token, { issuer: iss, audience });
  if (!claimsMatch(match, verified.claims, audience)) throw new IdentityMismatch(identityUid);
  return verified;
}

async function verifyStaticKeys(
  token: string,
  unverified: JWTPayload,
  identityUid: string,
  keys: StaticKeysData,
  ctx: AssumptionContext & { audience?: string },
): Promise<VerifiedExternalToken> {
  if (unverified.iss !== keys.issuer || unverified.sub !== keys.subject)
    throw new IdentityMismatch(identityUid);
  const allowed = keys.audiences && keys.audiences.length > 0 ? keys.audiences : [ctx.wharfIssuerUrl];
  if (ctx.audience !== undefined && !allowed.includes(ctx.audience)) throw new IdentityMismatch(identityUid);
  let jwks: JSONWebKeySet;
  try {
    jwks = JSON.parse(keys.issuerKeys) as JSONWebKeySet;
  } catch {
    throw new ExternalTokenError("the identity's registered issuer keys are not a valid key set");
  }
  const verified = await ctx.verifier.verifyWithKeys(token, jwks, {
    issuer: keys.issuer,
    subject: keys.subject,
    audience: ctx.audience ?? allowed,
  });
  // Checked after the signature, so only the key holder learns the identity has expired.
  if (keys.expirationTime !== undefined && keys.expirationTime <= ctx.now) {
    throw new ExternalTokenError("the identity's static keys have expired");
  }
  return verified;
}

function audienceMatcher(match: ClaimMatchData, wharfIssuerUrl: string): (aud: string) => boolean {
  if (match.audience) {
    const want = match.audience;
    return (aud) => aud === want;
  }
  if (match.audiencePattern) {
    const pattern = compilePattern(match.audiencePattern, "claim_match.audience_pattern");
    return (aud) => pattern.test(aud);
  }
  return (aud) => aud === wharfIssuerUrl;
}

/** True when the (verified or not) claims satisfy every part of the claimMatch. */
function claimsMatch(match: ClaimMatchData, claims: JWTPayload, audience: (aud: string) => boolean): boolean {
  const iss = typeof claims.iss === "string" ? claims.iss : undefined;
  const sub = typeof claims.sub === "string" ? claims.sub : undefined;
  if (iss === undefined || sub === undefined) return false;
  if (!exactOrPattern(match.issuer, match.issuerPattern, iss, "issuer")) return false;
  if (!exactOrPattern(match.subject, match.subjectPattern, sub, "subject")) return false;
  if (!audienceOf(claims.aud).some(audience)) return false;
  for (const [name, want] of Object.entries(match.claims ?? {})) {
    if (!claimTexts(claims[name]).some((v) => v === want)) return false;
  }
  for (const [name, pattern] of Object.entries(match.claimPatterns ?? {})) {
    const re = compilePattern(pattern, `claim_match.claim_patterns.${name}`);
    if (!claimTexts(claims[name]).some((v) => re.test(v))) return false;
  }
  return true;
}

function exactOrPattern(
  exact: string | undefined,
  pattern: string | undefined,
  value: string,
  field: string,
) {
  if (exact) return value === exact;
  if (pattern) return compilePattern(pattern, `claim_match.${field}_pattern`).test(value);
  return false;
}

/** A claim's values as text: a string itself, numbers/booleans as JSON, a list's such elements. */
function claimTexts(value: unknown): string[] {
  const one = (v: unknown): string[] =>
    typeof v === "string" ? [v] : typeof v === "number" || typeof v === "boolean" ? [String(v)] : [];
  return Array.isArray(value) ? value.flatMap(one) : one(value);
}
