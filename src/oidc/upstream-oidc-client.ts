import { unavailable } from "../core/errors.js";
import { externalTokenFailure } from "./external-token-error.js";
import { ExternalTokenError, type ExternalTokenVerifier } from "./external-token-verifier.js";
import type { UpstreamOidc } from "./upstream-oidc.js";

/**
 * The login flow's view of upstream providers, over the process's external-token verifier (the
 * same discovery and key-set caches the STS uses). Verification failures become PERMISSION_DENIED,
 * unreachable providers UNAVAILABLE.
 */
export function createUpstreamOidc(verifier: ExternalTokenVerifier): UpstreamOidc {
  return {
    async endpoints(issuer) {
      const metadata = await translated(() => verifier.discovery.get(issuer));
      const authorizationEndpoint = metadata.raw.authorization_endpoint;
      const tokenEndpoint = metadata.raw.token_endpoint;
      if (typeof authorizationEndpoint !== "string" || typeof tokenEndpoint !== "string") {
        throw unavailable(`${issuer} publishes no authorization or token endpoint`);
      }
      return { authorizationEndpoint, tokenEndpoint };
    },
    async verifyIdToken(idToken, issuer, audience) {
      const verified = await translated(() => verifier.verify(idToken, { issuer, audience }));
      return verified.claims as Record<string, unknown>;
    },
  };
}

async function translated<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (!(err instanceof ExternalTokenError)) throw err;
    throw externalTokenFailure(err, "verifying ID token");
  }
}
