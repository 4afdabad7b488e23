import type { Issuer } from "../auth/issuer.js";
import type { RevocationWatch } from "../auth/token-revocations.js";
import type { TokenVerifier } from "../auth/token-verifier.js";
import { parseCapabilityNames, shortNameOf } from "../authz/capabilities.js";
import { intersectRoots, minimalRoots } from "../authz/subtrees.js";
import { CAP_CLAIM, restrictionsOf, SCOPE_CLAIM } from "../authz/token-restrictions.js";
import type { Clock } from "../core/clock.js";
import { formatTimestamp } from "../core/clock.js";
import { type DomainError, invalidArgument, isDomainError, permissionDenied } from "../core/errors.js";
import { isUidp } from "../core/uidp.js";
import type { ExchangedPerson } from "../login/person-exchange.js";
import { SESSION_GRANTS_CLAIM } from "../login/session-grants.js";
import { externalTokenFailure } from "../oidc/external-token-error.js";
import { ExternalTokenError, type ExternalTokenVerifier } from "../oidc/external-token-verifier.js";
import type { Store } from "../storage/store.js";
import { verifyAssumption } from "./assumable-identity.js";
import {
  issueRefreshToken,
  type RefreshBinding,
  RefreshRefused,
  rotateRefreshToken,
} from "./refresh-tokens.js";

/** Lifetime of the tokens the STS mints. */
export const STS_TOKEN_TTL_SECONDS = 3600;

/** An identity's lastSeenTime is written at most this often. */
export const LAST_SEEN_INTERVAL_MS = 60_000;

/** A token as the STS returns it (`RawToken`): `expiry` in RFC 3339. */
export interface RawToken {
  token: string;
  expiry: string;
  refreshToken?: string;
}

/** The parameters of an exchange (from the query string or body). */
export interface ExchangeRequest {
  /** Requested audiences; empty = the API URL. */
  aud: string[];
  /** Uidp of the identity to assume; "" = re-issue a token of Wharf's own issuer. */
  identity: string;
  /**
   * Uid of an organization identity provider (or `default`): the presented token is a person's ID
   * token of that provider, exchanged for a token of their registered identity.
   */
  identityProvider: string;
  /** Group uidps to restrict the token to (`scopes` and the older `scope`). */
  scopes: string[];
  /** Capability names to restrict the token to. */
  caps: string[];
  createRefreshToken: boolean;
}

/** The Security Token Service behind `/sts/exchange` and `/sts/exchange_refresh_token`. */
export interface Sts {
  /**
   * Exchanges `presented` (the bearer token) for a Wharf token. With `identity`: the token must
   * be allowed to assume that identity (see `verifyAssumption`); the new token's `sub` is the
   * identity, `act` the upstream token's {iss, sub, aud}. Without: `presented` must be a Wharf
   * API token, re-issued for the same subject with the requested audiences and restrictions
   * narrowed (never broader, never outliving it; no refresh token). Failures to verify are
   * PERMISSION_DENIED "verifying token: <reason>" (UNAVAILABLE when the upstream issuer could not
   * be reached); bad parameters INVALID_ARGUMENT.
   */
  exchange(presented: string, request: ExchangeRequest): Promise<RawToken>;
  /**
   * Rotates a refresh token: a new access token (audiences/scopes/caps may only narrow those the
   * refresh token is bound to) and the successor refresh token. PERMISSION_DENIED for an unknown,
   * expired or spent refresh token (a spent one revokes its family), a refresh token issued before
   * a revocation of its identity (`wharf admin tokens revoke`), and for a deleted or expired identity.
   */
  refresh(
    refreshToken: string,
    request: Omit<ExchangeRequest, "identity" | "identityProvider" | "createRefreshToken">,
  ): Promise<{ token: RawToken; refreshToken: RawToken }>;
  /** The audiences a caller may ask for: the API URL and the registry URL. */
  allowedAudiences(): string[];
}

/** What the STS is built from. */
export interface StsDeps {
  /** Identities to assume and refresh tokens; `transaction` rotates a refresh token. */
  store: Pick<Store, "identities" | "refreshTokens" | "transaction">;
  issuer: Issuer;
  clock: Clock;
  /** Verifies upstream tokens (discovery, JWKS) and static-key tokens. */
  externalTokens: ExternalTokenVerifier;
  /** Verifies Wharf's own API-audience tokens (for re-issue). */
  wharfTokens: TokenVerifier;
  apiUrl: string;
  /** The registry's public URL, the other audience a token may be exchanged for. */
  registryUrl: string;
  /**
   * Withdrawn tokens (`wharf admin tokens revoke`): a refresh token issued before a revocation
   * matching its identity is refused. Re-read before each refresh, so it is exact, not polled.
   */
  revocations?: Pick<RevocationWatch, "isRevoked" | "refresh">;
  /** Verifies a person's ID token of an identity provider and registers them (the login flow's logic). */
  personExchange?: (idToken: string, providerUid: string) => Promise<ExchangedPerson>;
}

/** Creates the STS. */
export function createSts(deps: StsDeps): Sts {
  const { store, issuer, clock } = deps;
  let lastSweep = 0;

  function allowedAudiences(): string[] {
    return [deps.apiUrl, deps.registryUrl];
  }

  function audiences(requested: readonly string[]): string[] {
    if (requested.length === 0) return [deps.apiUrl];
    const allowed = allowedAudiences();
    const out = [...new Set(requested.map((a) => a.replace(/\/+$/, "")))];
    for (const aud of out) {
      if (!allowed.includes(aud)) throw invalidArgument("aud", `must be one of ${allowed.join(", ")}`);
    }
    return out;
  }

  function requestedScopes(scopes: readonly string[]): string[] | undefined {
    if (scopes.length === 0) return undefined;
    for (const s of scopes)
      if (!isUidp(s)) throw invalidArgument("scopes", `"${s.slice(0, 100)}" is not a group uidp`);
    return minimalRoots(scopes);
  }

  function requestedCaps(caps: readonly string[]): string[] | undefined {
    if (caps.length === 0) return undefined;
    return parseCapabilityNames("cap", caps).map(shortNameOf);
  }

  async function mint(
    subject: string,
    audience: readonly string[],
    restrictions: {
      scopes?: readonly string[];
      caps?: readonly string[];
      act?: Record<string, unknown>;
      sessionGrants?: readonly string[];
    },
    notAfterSeconds = Number.POSITIVE_INFINITY,
  ): Promise<RawToken> {
    const now = Math.floor(clock.now() / 1000);
    const ttl = Math.min(STS_TOKEN_TTL_SECONDS, Math.floor(notAfterSeconds) - now);
    if (ttl <= 0) throw permissionDenied("verifying token: token has expired");
    const extraClaims: Record<string, unknown> = {};
    if (restrictions.act) extraClaims.act = restrictions.act;
    if (restrictions.scopes) extraClaims[SCOPE_CLAIM] = [...restrictions.scopes];
    if (restrictions.caps) extraClaims[CAP_CLAIM] = [...restrictions.caps];
    if (restrictions.sessionGrants?.length)
      extraClaims[SESSION_GRANTS_CLAIM] = [...restrictions.sessionGrants];
    const token = await issuer.mint({
      subject,
      audience: audience.length === 1 ? (audience[0] as string) : audience,
      ttlSeconds: ttl,
      extraClaims,
    });
    return { token, expiry: formatTimestamp((now + ttl) * 1000) };
  }

  function sweepExpired(now: number): void {
    if (now - lastSweep < 3600_000) return;
    lastSweep = now;
    store.refreshTokens.deleteExpired(now).catch(() => {});
  }

  async function exchangeOwnToken(presented: string, request: ExchangeRequest): Promise<RawToken> {
    if (request.createRefreshToken) {
      throw invalidArgument(
        "create_refresh_token",
        "a Wharf token cannot be exchanged for a refresh token (it would outlive the token)",
      );
    }
    let principal: Awaited<ReturnType<TokenVerifier["authenticate"]>>;
    try {
      principal = await deps.wharfTokens.authenticate(presented);
    } catch (err) {
      throw permissionDenied(`verifying token: ${reasonOf(err)}`);
    }
    const held = restrictionsOf(principal.claims);
    const wantScopes = requestedScopes(request.scopes);
    const wantCaps = requestedCaps(request.caps);
    const heldCaps = held.caps ? [...held.caps].map(shortNameOf) : undefined;
    const scopes = narrow(wantScopes, held.scopes, (a, b) => intersectRoots(a, b));
    const caps = narrow(wantCaps, heldCaps, (a, b) => a.filter((c) => b.includes(c)));
    const c = principal.claims;
    const act: Record<string, unknown> = { iss: c.iss, sub: c.sub, aud: c.aud };
    if (c.act !== undefined) act.act = c.act;
    const restrictions: Parameters<typeof mint>[2] = { act };
    if (scopes) restrictions.scopes = scopes;
    if (caps) restrictions.caps = caps;
    return mint(principal.identityUid, audiences(request.aud), restrictions, Number(c.exp));
  }

  /** A person's ID token of an identity provider → a token of their registered identity. */
  async function exchangePerson(
    presented: string,
    request: ExchangeRequest,
    aud: string[],
    scopes: string[] | undefined,
    caps: string[] | undefined,
  ): Promise<RawToken> {
    if (!deps.personExchange) throw invalidArgument("identity_provider", "is not supported by this server");
    const person = await deps.personExchange(presented, request.identityProvider);
    const binding: RefreshBinding = { identityUid: person.identityUid, audience: aud, act: person.act };
    if (scopes) binding.scopes = scopes;
    if (caps) binding.caps = caps;
    const raw = await mint(person.identityUid, aud, { ...binding, sessionGrants: person.sessionGrants });
    // Group-derived sessions end with their token (ADR 0011): no refresh token for them.
    if (request.createRefreshToken && person.sessionGrants.length === 0) {
      const now = clock.now();
      raw.refreshToken = (await issueRefreshToken(store, binding, { now })).token;
      sweepExpired(now);
    }
    return raw;
  }

  return {
    allowedAudiences,

    async exchange(presented, request) {
      const aud = audiences(request.aud);
      const scopes = requestedScopes(request.scopes);
      const caps = requestedCaps(request.caps);
      if (request.identityProvider !== "") {
        if (request.identity !== "") {
          throw invalidArgument("identity_provider", "give either identity or identity_provider, not both");
        }
        return exchangePerson(presented, request, aud, scopes, caps);
      }
      if (request.identity === "") return exchangeOwnToken(presented, request);
      const now = clock.now();
      const identity = isUidp(request.identity) ? await store.identities.get(request.identity) : undefined;
      let verified: Awaited<ReturnType<typeof verifyAssumption>>;
      try {
        verified = await verifyAssumption(presented, request.identity, identity, {
          verifier: deps.externalTokens,
          wharfIssuerUrl: issuer.issuerUrl,
          now,
        });
      } catch (err) {
        throw verificationError(err);
      }
      const uid = request.identity;
      await store.refreshTokens.markIdentitySeen(uid, now, LAST_SEEN_INTERVAL_MS).catch(() => false);
      const act = { iss: verified.claims.iss, sub: verified.claims.sub, aud: verified.claims.aud };
      const binding: RefreshBinding = { identityUid: uid, audience: aud, act };
      if (scopes) binding.scopes = scopes;
      if (caps) binding.caps = caps;
      const notAfterMs = identity?.staticKeys?.expirationTime;
      const raw = await mint(uid, aud, binding, notAfterMs === undefined ? undefined : notAfterMs / 1000);
      if (request.createRefreshToken) {
        const issued = await issueRefreshToken(store, binding, {
          now,
          ...(notAfterMs === undefined ? {} : { notAfter: notAfterMs }),
        });
        raw.refreshToken = issued.token;
        sweepExpired(now);
      }
      return raw;
    },

    async refresh(refreshToken, request) {
      const now = clock.now();
      const wantScopes = requestedScopes(request.scopes);
      const wantCaps = requestedCaps(request.caps);
      const wantAud = request.aud.length === 0 ? undefined : audiences(request.aud);
      let notAfterMs: number | undefined;
      let rotated: Awaited<ReturnType<typeof rotateRefreshToken>>;
      try {
        rotated = await rotateRefreshToken(store, refreshToken, {
          now,
          async check(row) {
            // Checked before the token is spent, so a bad request does not cost the client its token.
            for (const a of wantAud ?? []) {
              if (!row.audience.includes(a)) throw new RefreshRefused(`it was not issued for audience ${a}`);
            }
            if (deps.revocations) {
              await deps.revocations.refresh();
              if (deps.revocations.isRevoked(row.identityUid, row.createTime)) {
                throw new RefreshRefused("refresh token has been revoked");
              }
            }
            const identity = await store.identities.get(row.identityUid);
            if (!identity) throw new RefreshRefused("refresh token is not valid");
            const expiration = identity.staticKeys?.expirationTime;
            if (expiration !== undefined && expiration <= now) {
              throw new RefreshRefused("the identity's static keys have expired");
            }
            notAfterMs = expiration;
            return expiration === undefined ? undefined : { notAfter: expiration };
          },
        });
      } catch (err) {
        if (err instanceof RefreshRefused) throw permissionDenied(`verifying refresh token: ${err.message}`);
        throw err;
      }
      const { row, successor } = rotated;
      const aud = wantAud ?? row.audience;
      const restrictions: Parameters<typeof mint>[2] = {};
      if (row.act) restrictions.act = row.act;
      const scopes = narrow(wantScopes, row.scopes, (a, b) => intersectRoots(a, b));
      const caps = narrow(wantCaps, row.caps, (a, b) => a.filter((c) => b.includes(c)));
      if (scopes) restrictions.scopes = scopes;
      if (caps) restrictions.caps = caps;
      await store.refreshTokens
        .markIdentitySeen(row.identityUid, now, LAST_SEEN_INTERVAL_MS)
        .catch(() => false);
      const token = await mint(
        row.identityUid,
        aud,
        restrictions,
        notAfterMs === undefined ? undefined : notAfterMs / 1000,
      );
      sweepExpired(now);
      return {
        token,
        refreshToken: { token: successor.token, expiry: formatTimestamp(successor.expireTime) },
      };
    },
  };
}

/** The narrower of a requested and a held restriction (undefined = unrestricted). */
function narrow(
  wanted: readonly string[] | undefined,
  held: readonly string[] | undefined,
  intersect: (a: readonly string[], b: readonly string[]) => string[],
): string[] | undefined {
  if (wanted === undefined) return held === undefined ? undefined : [...held];
  if (held === undefined) return [...wanted];
  return intersect(wanted, held);
}

/** "Unauthenticated: token has expired" → "token has expired". */
function reasonOf(err: unknown): string {
  if (isDomainError(err)) return err.message.replace(/^[A-Za-z ]+: /, "");
  if (err instanceof Error && err instanceof ExternalTokenError) return err.message;
  return "token could not be verified";
}

function verificationError(err: unknown): DomainError {
  if (err instanceof ExternalTokenError) {
    return externalTokenFailure(err, "verifying token");
  }
  if (isDomainError(err)) return err;
  throw err;
}
