import type { RevocationChecker } from "../auth/token-revocations.js";
import type { Principal } from "../core/context.js";
import { unauthenticated } from "../core/errors.js";
import { isUidp } from "../core/uidp.js";
import { ExternalTokenError, type ExternalTokenVerifier } from "../oidc/external-token-verifier.js";
import type { Store } from "../storage/store.js";
import { verifyAssumption } from "./assumable-identity.js";

/** Verifies registry Basic credentials `<identity uid>:<JWT>` (pull tokens); see createPullTokenAuthenticator. */
export type PullTokenAuthenticator = (identityUid: string, jwt: string) => Promise<Principal>;

/**
 * Creates the registry's pull-token check: `identityUid` must be a static-keys identity whose
 * registered keys verify `jwt`, with `iss`/`sub` equal to the identity's, `aud` containing the
 * registry URL (which the identity's `audiences` must allow), neither the JWT nor the identity
 * expired. Reads the identity on every call, so a deleted identity stops working at once. The
 * principal's claims look like a registry token of the identity (`aud` the registry, `exp` the
 * earlier of the JWT's and the identity's expiration, `act` the JWT's iss/sub/aud), so the
 * registry and its `/token` treat it like one. A JWT issued before a revocation of the identity
 * (`wharf admin tokens revoke`; one without `iat` counts as issued at the dawn of time) is refused.
 * Throws UNAUTHENTICATED "verifying token: …".
 */
export function createPullTokenAuthenticator(deps: {
  store: Pick<Store, "identities">;
  externalTokens: ExternalTokenVerifier;
  /** Wharf's issuer URL (the `iss` of the principal's claims). */
  wharfIssuerUrl: string;
  /** The registry's public URL: the audience the JWT must name, and the principal's `aud`. */
  registryUrl: string;
  clock: { now(): number };
  revocations?: RevocationChecker;
}): PullTokenAuthenticator {
  return async (identityUid, jwt) => {
    const { registryUrl } = deps;
    const now = deps.clock.now();
    try {
      const identity = isUidp(identityUid) ? await deps.store.identities.get(identityUid) : undefined;
      const verified = await verifyAssumption(jwt, identityUid, identity, {
        verifier: deps.externalTokens,
        wharfIssuerUrl: deps.wharfIssuerUrl,
        audience: registryUrl,
        now,
      });
      const iat = verified.claims.iat;
      const issuedAtMs = typeof iat === "number" ? iat * 1000 : Number.NEGATIVE_INFINITY;
      if (deps.revocations?.isRevoked(identityUid, issuedAtMs)) {
        throw unauthenticated("verifying token: token has been revoked");
      }
      const expiration = identity?.staticKeys?.expirationTime ?? Number.POSITIVE_INFINITY;
      const exp = Math.min(verified.claims.exp, Math.floor(expiration / 1000));
      const { iss, sub, aud } = verified.claims;
      return {
        identityUid,
        isAdmin: false,
        claims: Object.freeze({
          iss: deps.wharfIssuerUrl,
          sub: identityUid,
          aud: registryUrl,
          exp,
          act: { iss, sub, aud },
        }),
      };
    } catch (err) {
      if (err instanceof ExternalTokenError) throw unauthenticated(`verifying token: ${err.message}`);
      throw err;
    }
  };
}
