import type { Clock } from "../core/clock.js";
import type { UpstreamOidc } from "../oidc/upstream-oidc.js";
import type { Store } from "../storage/store.js";
import { personOf, sessionGrantsOf } from "./login-flow.js";
import { type DefaultLoginProvider, resolveLoginProvider } from "./login-provider.js";
import { registerPerson } from "./register-person.js";

/** Who an identity provider's ID token turned out to be, for the STS to mint a token. */
export interface ExchangedPerson {
  identityUid: string;
  act: { iss: string; sub: string; aud: string };
  /** External group role mappings that apply to this session (claim `egm`); [] = none. */
  sessionGrants: string[];
}

/**
 * `/sts/exchange?identity_provider=<uid>` without a browser: verifies `idToken` as an ID token of
 * that organization provider (or of the server's default provider for `default`) for Wharf's client
 * id, then does what a browser login does — registers the person on first use (default role), and
 * resolves the group mappings of this session. PERMISSION_DENIED when the token does not verify,
 * NOT_FOUND for an unknown provider.
 */
export function createPersonExchange(deps: {
  store: Pick<Store, "identityProviders" | "externalGroupRoleMappings" | "transaction">;
  upstream: UpstreamOidc;
  clock: Clock;
  defaultProvider?: DefaultLoginProvider | undefined;
}): (idToken: string, providerUid: string) => Promise<ExchangedPerson> {
  const { store, upstream, clock } = deps;
  return async (idToken, providerUid) => {
    const provider = await resolveLoginProvider(
      providerUid === "default" ? "" : providerUid,
      store.identityProviders,
      deps.defaultProvider,
    );
    const claims = await upstream.verifyIdToken(idToken, provider.issuer, provider.clientId);
    const person = personOf(claims, provider);
    const { uid } = await registerPerson(store, person, provider, clock.now());
    return {
      identityUid: uid,
      act: { iss: person.issuer, sub: person.subject, aud: provider.clientId },
      sessionGrants: await sessionGrantsOf(store, provider, claims),
    };
  };
}
