import { createIssuer, type Issuer } from "../auth/issuer.js";
import { createSigningKeyRing } from "../auth/signing-keys.js";
import { type RevocationWatch, watchTokenRevocations } from "../auth/token-revocations.js";
import { createTokenVerifier, type TokenVerifier } from "../auth/token-verifier.js";
import type { WharfConfig } from "../config/config.js";
import type { Clock } from "../core/clock.js";
import { createFederation, type Federation, type FederationOptions } from "../federation/federation.js";
import type { Store } from "../storage/store.js";
import type { PublicUrls } from "./ports.js";

/** Wharf's tokens: who signs them, which are withdrawn, who checks API tokens, and federation. */
export interface Tokens {
  /** Signs with the stored keys; its issuer URL is the API's public URL. */
  issuer: Issuer;
  /** Withdrawn tokens, shared by every verifier of this process. */
  revocations: RevocationWatch;
  /** Verifies API-audience tokens (the API's authenticator). */
  verifier: TokenVerifier;
  /** The STS, pull tokens and the external-token verifier, for both public URLs. */
  federation: Federation;
}

/**
 * Builds the issuer at the API's public URL (keys and the revocation poll trusted for
 * `config.cacheTtlMs` when set); starts watching token revocations (polled, so
 * revocations made anywhere, `wharf admin tokens revoke`, apply here within seconds: ADR 0018;
 * stopped through `onClose`) and reads them once before returning, so nothing is served before
 * they are known; then federation and the API token verifier.
 */
export async function buildTokens(deps: {
  store: Store;
  clock: Clock;
  logger: (line: object) => void;
  urls: PublicUrls;
  config: Pick<WharfConfig, "defaultLogin" | "cacheTtlMs">;
  federation: FederationOptions | undefined;
  onClose: (close: () => Promise<void>) => void;
}): Promise<Tokens> {
  const { store, clock, logger, urls } = deps;
  const ttl = deps.config.cacheTtlMs;
  const keys = createSigningKeyRing({
    signingKeys: store.signingKeys,
    clock,
    ...(ttl === undefined ? {} : { cacheTtlMs: ttl }),
  });
  const issuer = createIssuer({ store, issuerUrl: urls.apiUrl, clock, keys });
  const revocations = watchTokenRevocations({
    revocations: store.tokenRevocations,
    clock,
    ...(ttl === undefined ? {} : { pollIntervalMs: ttl }),
    onError: (err) =>
      logger({
        level: "error",
        msg: "token revocations could not be read",
        event: "token-revocations",
        error: String(err),
      }),
  });
  deps.onClose(async () => revocations.close());
  await revocations.refresh();
  const federation = createFederation({
    store,
    issuer,
    clock,
    apiUrl: urls.apiUrl,
    registryUrl: urls.registryUrl,
    revocations,
    options: deps.federation,
    defaultLogin: deps.config.defaultLogin,
  });
  const verifier = createTokenVerifier({ issuer, audience: urls.apiUrl, clock, revocations });
  return { issuer, revocations, verifier, federation };
}
