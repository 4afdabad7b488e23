import { createWellKnownRoutes } from "../auth/well-known.js";
import type { AccessResolver } from "../authz/access.js";
import type { WharfConfig } from "../config/config.js";
import type { CallAuditor } from "../core/call-auditor.js";
import type { Clock } from "../core/clock.js";
import type { PageTokenCodec } from "../core/list.js";
import type { SignedLinks } from "../core/signed-links.js";
import { createTokenBuckets } from "../core/token-buckets.js";
import { issueRefreshToken } from "../federation/refresh-tokens.js";
import { createLoginFlow } from "../login/login-flow.js";
import { createUpstreamOidc } from "../oidc/upstream-oidc-client.js";
import { createFederationRoutes } from "../plain-routes/federation-routes.js";
import { createLoginRoutes } from "../plain-routes/login-routes.js";
import type { PullPolicies } from "../registry/supply-chain/policies/pull-policies.js";
import type { SbomReader, SignatureVerifier } from "../registry/supply-chain/supply-chain.js";
import { createServiceBindings } from "../service-bindings.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import type { Store } from "../storage/store.js";
import { createApiRateLimiter } from "../transport/api-rate-limit.js";
import { createApiReferenceRoutes } from "../transport/api-reference-routes.js";
import { trustedProxies } from "../transport/client-address.js";
import { createConsoleRoutes } from "../transport/console-routes.js";
import { type ApiHandler, createApiHandler, type ExtraRoute } from "../transport/create-api-handler.js";
import { createOperationsRoutes } from "../transport/operations-routes.js";
import { rawReportLinker } from "../vulnreports/raw-report-link.js";
import type { Delivery } from "./delivery-wing.js";
import type { Operations } from "./operations.js";
import type { PublicUrls } from "./ports.js";
import type { Tokens } from "./tokens.js";
import type { Upstreams } from "./upstreams.js";

/** What the API wing is built from. */
export interface ApiWingDeps {
  config: Pick<
    WharfConfig,
    | "vulnReportMaxBytes"
    | "eolGraceMonths"
    | "termsDocuments"
    | "publicNamespace"
    | "metricsPublic"
    | "defaultLogin"
    | "rateLimits"
    | "trustProxy"
  >;
  store: Store;
  blobs: BlobDriver;
  clock: Clock;
  logger: (line: object) => void;
  urls: PublicUrls;
  pageTokens: PageTokenCodec;
  /** Signs the expiring links of large raw reports (the download route opens them). */
  links: SignedLinks;
  access: AccessResolver;
  tokens: Pick<Tokens, "issuer" | "verifier" | "federation">;
  delivery: Pick<Delivery, "events" | "sinks">;
  operations: Operations;
  /** The security data wing's routes (the vulnerability report upload). */
  securityRoutes: readonly ExtraRoute[];
  /** The audit log of mutating calls (ADR 0048). */
  audit?: CallAuditor | undefined;
  /** The secret box upstream passwords are sealed with. */
  upstreams: Pick<Upstreams, "secrets">;
  /** Told when a replication run was queued through the API. */
  replicationQueued?: (() => void) | undefined;
  /** The SBOM reader SbomService answers from (`buildSbomReader`). */
  sboms: SbomReader;
  /** The signature verifier (SignaturesService, the verified signers of tags; ADR 0057). */
  signatures: SignatureVerifier;
  /** The pull-policy evaluator EvaluatePolicies answers from (ADR 0058). */
  pullPolicies?: PullPolicies | undefined;
}

/**
 * The API port's handler: every service bound to its implementation, authenticated by the API
 * token verifier and authorized per request, and, outside the RPC pipeline in this order, the
 * operations routes (`/healthz`, `/readyz`, `/metrics`), the issuer's well-known documents, the
 * security data routes, the API reference, the web console (its CSP letting it call the
 * registry's origin, and its single-page-app fallback), the STS and auth config routes, and the
 * browser login routes. RPCs are rate limited per caller when `--rate-limit-api` is set (ADR 0043;
 * the plain routes are not). Starts nothing.
 */
export function buildApiHandler(deps: ApiWingDeps): ApiHandler {
  const { config, store, clock, logger, urls, access } = deps;
  const { issuer, verifier, federation } = deps.tokens;
  const accessFor: Parameters<typeof createApiHandler>[0]["accessFor"] = (principal) =>
    access.accessFor(principal);
  const bindings = createServiceBindings({
    store,
    blobs: deps.blobs,
    vulnReportMaxBytes: config.vulnReportMaxBytes,
    eolGraceMonths: config.eolGraceMonths,
    pageTokens: deps.pageTokens,
    rawReportLink: rawReportLinker(deps.links, urls.apiUrl),
    events: deps.delivery.events,
    bindingsChanged: (identityUid?: string) => access.invalidate(identityUid),
    ...deps.delivery.sinks,
    termsDocuments: config.termsDocuments,
    publicNamespace: config.publicNamespace,
    secrets: deps.upstreams.secrets,
    replicationQueued: deps.replicationQueued,
    sboms: deps.sboms,
    signatures: deps.signatures,
    pullPolicies: deps.pullPolicies,
  });
  const { metrics, readiness } = deps.operations;
  const apiLimit = config.rateLimits?.api;
  const webConsole = createConsoleRoutes({ connectOrigins: [new URL(urls.registryUrl).origin] });
  const loginFlow = createLoginFlow({
    store,
    issuer,
    upstream: createUpstreamOidc(federation.externalTokens),
    clock,
    apiUrl: urls.apiUrl,
    audiences: [urls.apiUrl, urls.registryUrl],
    defaultProvider: config.defaultLogin,
    issueRefreshToken: async ({ identityUid, audience, act }) =>
      (await issueRefreshToken(store, { identityUid, audience: [audience], act }, { now: clock.now() }))
        .token,
  });
  return createApiHandler({
    bindings,
    authenticator: verifier,
    accessFor,
    clock,
    logger,
    metrics: metrics.api,
    trustProxy: trustedProxies(config.trustProxy),
    extraRoutes: [
      ...createOperationsRoutes({
        readiness,
        metrics: { ...metrics, public: config.metricsPublic },
        authenticator: verifier,
        accessFor,
      }),
      ...createWellKnownRoutes(issuer),
      ...deps.securityRoutes,
      ...createApiReferenceRoutes(),
      ...webConsole.routes,
      ...createFederationRoutes({
        sts: federation.sts,
        issuerUrl: issuer.issuerUrl,
        apiUrl: urls.apiUrl,
        registryUrl: federation.registryUrl,
      }),
      ...createLoginRoutes(loginFlow),
    ],
    fallbackRoute: webConsole.fallback,
    audit: deps.audit,
    rateLimit: apiLimit === undefined ? undefined : createApiRateLimiter(createTokenBuckets(apiLimit, clock)),
  });
}
