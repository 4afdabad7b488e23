import type { Issuer } from "../auth/issuer.js";
import type { RevocationWatch } from "../auth/token-revocations.js";
import { createTokenVerifier } from "../auth/token-verifier.js";
import type { Clock } from "../core/clock.js";
import type { DefaultLoginProvider } from "../login/login-provider.js";
import { createPersonExchange } from "../login/person-exchange.js";
import { createExternalTokenVerifier, type ExternalTokenVerifier } from "../oidc/external-token-verifier.js";
import { createUpstreamOidc } from "../oidc/upstream-oidc-client.js";
import type { Store } from "../storage/store.js";
import { createPullTokenAuthenticator, type PullTokenAuthenticator } from "./pull-token-auth.js";
import { createSts, type Sts } from "./sts.js";

/** Tunables of token federation (tests shorten cooldowns; deployments may allow http issuers). */
export interface FederationOptions {
  /** Accept `http:` upstream issuers on any host (default: https, http only on loopback). */
  allowHttpIssuers?: boolean;
  /** Least time between key-set refetches caused by unknown kids. Default 30 s. */
  jwksCooldownMs?: number;
  /** How long upstream discovery documents are used. Default 10 minutes. */
  discoveryTtlMs?: number;
  /** Timeout of each upstream fetch. Default 5 s. */
  fetchTimeoutMs?: number;
  /** Largest upstream response. Default 256 KiB. */
  maxResponseBytes?: number;
}

/** Everything federation adds to a server. */
export interface Federation {
  /** The process's one external-token verifier (its caches are shared by every use). */
  externalTokens: ExternalTokenVerifier;
  sts: Sts;
  /** The registry's public URL without trailing slashes. */
  registryUrl: string;
  /** The registry's check of `<identity uid>:<jwt>` Basic credentials. */
  pullTokens: PullTokenAuthenticator;
}

/**
 * Builds federation over the store and Wharf's issuer; `apiUrl` is the issuer URL and API audience,
 * `registryUrl` the registry's public URL (the other audience, and that of pull tokens).
 */
export function createFederation(deps: {
  /** What the STS, the person exchange and pull-token authentication read and write. */
  store: Pick<
    Store,
    "identities" | "refreshTokens" | "identityProviders" | "externalGroupRoleMappings" | "transaction"
  >;
  issuer: Issuer;
  clock: Clock;
  apiUrl: string;
  registryUrl: string;
  options?: FederationOptions;
  /** The server's default login provider (`identity_provider=default` exchanges). */
  defaultLogin?: DefaultLoginProvider | undefined;
  /** Withdrawn tokens: refused for re-issue, and refresh tokens issued before them refused. */
  revocations?: Pick<RevocationWatch, "isRevoked" | "refresh">;
}): Federation {
  const { store, issuer, clock, apiUrl } = deps;
  const o = deps.options ?? {};
  const registryUrl = deps.registryUrl.replace(/\/+$/, "");
  const externalTokens = createExternalTokenVerifier({
    clock,
    ...(o.allowHttpIssuers === undefined ? {} : { allowHttpIssuers: o.allowHttpIssuers }),
    ...(o.jwksCooldownMs === undefined ? {} : { jwksCooldownMs: o.jwksCooldownMs }),
    ...(o.discoveryTtlMs === undefined ? {} : { discoveryTtlMs: o.discoveryTtlMs }),
    ...(o.fetchTimeoutMs === undefined ? {} : { timeoutMs: o.fetchTimeoutMs }),
    ...(o.maxResponseBytes === undefined ? {} : { maxBytes: o.maxResponseBytes }),
  });
  const sts = createSts({
    store,
    issuer,
    clock,
    externalTokens,
    wharfTokens: createTokenVerifier({
      ...{ issuer, audience: apiUrl, clock },
      ...(deps.revocations ? { revocations: deps.revocations } : {}),
    }),
    ...(deps.revocations ? { revocations: deps.revocations } : {}),
    apiUrl,
    registryUrl,
    personExchange: createPersonExchange({
      store,
      upstream: createUpstreamOidc(externalTokens),
      clock,
      defaultProvider: deps.defaultLogin,
    }),
  });
  return {
    externalTokens,
    sts,
    registryUrl,
    pullTokens: createPullTokenAuthenticator({
      store,
      externalTokens,
      wharfIssuerUrl: issuer.issuerUrl,
      registryUrl,
      clock,
      ...(deps.revocations ? { revocations: deps.revocations } : {}),
    }),
  };
}
