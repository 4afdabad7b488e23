import { createRegistryAudit } from "../audit/registry-audit.js";
import type { Issuer } from "../auth/issuer.js";
import type { RevocationChecker } from "../auth/token-revocations.js";
import { createTokenVerifier } from "../auth/token-verifier.js";
import type { AccessResolver } from "../authz/access.js";
import type { WharfConfig } from "../config/config.js";
import type { Clock } from "../core/clock.js";
import type { RegistryRateLimits } from "../core/rate-limit-spec.js";
import { createTokenBuckets } from "../core/token-buckets.js";
import { createSinkAddressPolicy, NO_SINK_EXCEPTIONS } from "../events/sink-address-policy.js";
import type { Federation } from "../federation/federation.js";
import { createMirrorNames } from "../oci/mirror-names.js";
import {
  ANONYMOUS_SUBJECT,
  createRegistryAuthenticator,
  type RegistryAuthenticator,
} from "../oci/registry-auth.js";
import { createRegistryGate } from "../oci/registry-gate.js";
import { createRegistryRateLimiter, type RegistryRateLimiter } from "../oci/registry-rate-limit.js";
import type { RegistryDeps } from "../oci/registry-request.js";
import { createBlobUploads } from "../registry/data-plane/blob-uploads.js";
import { createPublicContent } from "../registry/data-plane/public-content.js";
import { createRegistryContent } from "../registry/data-plane/registry-content.js";
import { createRepoResolver } from "../registry/data-plane/repo-resolver.js";
import { createPullThrough, type PullThrough } from "../registry/pull-through/pull-through.js";
import { createRemoteRegistry } from "../registry/remote/remote-client.js";
import type { PullPolicies } from "../registry/supply-chain/policies/pull-policies.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import type { Store } from "../storage/store.js";
import { trustedProxies } from "../transport/client-address.js";
import type { AuditWing } from "./audit-wing.js";
import type { Delivery } from "./delivery-wing.js";
import type { Operations } from "./operations.js";
import type { PublicUrls } from "./ports.js";
import type { SecurityData } from "./security-data-wing.js";
import type { Upstreams } from "./upstreams.js";

/** How long an upload session may be continued with the token that started it. */
const UPLOAD_SESSION_SECONDS = 24 * 60 * 60;

/** What the registry wing is built from. */
export interface RegistryWingDeps {
  config: Pick<
    WharfConfig,
    "publicNamespace" | "cacheTtlMs" | "rateLimits" | "trustProxy" | "registryUrl" | "mirrorUpstreams"
  >;
  store: Store;
  blobs: BlobDriver;
  clock: Clock;
  urls: PublicUrls;
  issuer: Issuer;
  revocations: RevocationChecker;
  access: AccessResolver;
  /** Checks `<identity uid>:<jwt>` Basic credentials (federation's pull tokens). */
  pullTokens: Federation["pullTokens"];
  delivery: Pick<Delivery, "events" | "pullEvents" | "sinks">;
  operations: Operations;
  securityData: Pick<SecurityData, "vulnReferrers">;
  /** The audit log's record batch and `--audit-pulls` (ADR 0048); none when omitted. */
  audit?: Pick<AuditWing, "buffer" | "pulls"> | undefined;
  /**
   * The upstream directory: pushes into an upstream's namespace are refused (ADR 0051), pulls there
   * go through the pull-through cache (ADR 0052).
   */
  upstreams?: Pick<Upstreams, "directory"> | undefined;
  /** The pull-policy evaluator every manifest GET/HEAD asks (ADR 0058); none: no policy is enforced. */
  pullPolicies?: PullPolicies | undefined;
  /** Where the cache logs (one warning per upstream per tagTtl while it serves cached copies). */
  logger?: ((line: object) => void) | undefined;
}

/**
 * The registry port's dependencies: content, uploads (with their hashing worker, closed by the
 * registry listener's `close`), name resolution and push-time creation, authentication (registry
 * tokens for the registry's or the API's audience, upload sessions continued for a day with the
 * token that started them, pull tokens), the public-namespace gate, events, the console's CORS
 * origin (the API's), readiness and metrics, the vulnerability report referrer ingest, and the
 * pull and push rate limits when `--rate-limit-registry` sets them (ADR 0043), and the trusted
 * proxies (whose forwarded origin moves the token realm when `--registry-url` is not set), and the
 * transparent mirror's name mapping when `--mirror-upstream` sets one (ADR 0053).
 */
export function buildRegistryDeps(deps: RegistryWingDeps): RegistryDeps {
  const { store, blobs, clock, urls, issuer } = deps;
  const { events, pullEvents } = deps.delivery;
  const verifierOptions = {
    ...{ issuer, audience: [urls.registryUrl, urls.apiUrl], clock, anonymousSubject: ANONYMOUS_SUBJECT },
    revocations: deps.revocations,
  };
  const auth = createRegistryAuthenticator({
    registryUrl: urls.registryUrl,
    verifier: createTokenVerifier(verifierOptions),
    // Upload sessions outlive registry tokens; they were authorized when they started.
    expiredVerifier: createTokenVerifier({
      ...verifierOptions,
      clockToleranceSeconds: UPLOAD_SESSION_SECONDS,
    }),
    accessResolver: deps.access,
    pullTokens: deps.pullTokens,
  });
  const resolver = createRepoResolver({
    store,
    clock,
    events,
    ...(deps.config.cacheTtlMs === undefined ? {} : { ttlMs: deps.config.cacheTtlMs }),
  });
  const audit = deps.audit;
  const content = createRegistryContent({ store, blobs, clock, events });
  const uploads = createBlobUploads({ store, blobs, clock, events });
  return {
    content,
    uploads,
    resolver,
    pullThrough: pullThroughOf(deps, { content, uploads, resolver }),
    audit:
      audit === undefined
        ? undefined
        : createRegistryAudit({
            clock,
            buffer: audit.buffer,
            auditPulls: audit.pulls,
            groupOfRepository: async (name) => (await resolver.resolve(name)).scope ?? "",
          }),
    auth,
    gate: createRegistryGate({ auth, publicNamespace: deps.config.publicNamespace }),
    publicContent: createPublicContent(store),
    issuer,
    events,
    pullEvents,
    clock,
    registryUrl: urls.registryUrl,
    consoleOrigin: new URL(urls.apiUrl).origin,
    readiness: deps.operations.readiness,
    metrics: deps.operations.metrics.registry,
    vulnReferrers: deps.securityData.vulnReferrers,
    rateLimit: registryRateLimiter(deps.config.rateLimits?.registry, auth, clock),
    trustProxy: trustedProxies(deps.config.trustProxy),
    realmFromRequest: deps.config.registryUrl === "",
    mirror: createMirrorNames({
      mappings: deps.config.mirrorUpstreams,
      isOrganization: async (name) => (await store.groups.getByName("", name)) !== undefined,
      now: () => clock.now(),
      ...(deps.config.cacheTtlMs === undefined ? {} : { ttlMs: deps.config.cacheTtlMs }),
    }),
    upstreams: deps.upstreams?.directory,
    pullPolicy: deps.pullPolicies,
  };
}

/**
 * The pull-through cache over the organizations' upstreams, or undefined without a directory. Each
 * upstream's client passes the webhook sinks' address policy and flags (`--events-allow-loopback`,
 * `--events-sink-allow`, `--events-allow-http`) and name resolution.
 */
function pullThroughOf(
  deps: RegistryWingDeps,
  parts: Pick<RegistryDeps, "content" | "uploads" | "resolver">,
): PullThrough | undefined {
  const upstreams = deps.upstreams?.directory;
  if (upstreams === undefined) return undefined;
  const { sinks } = deps.delivery;
  return createPullThrough({
    ...parts,
    upstreams,
    clock: deps.clock,
    logger: deps.logger ?? (() => {}),
    remoteFor: (upstream) =>
      createRemoteRegistry({
        url: upstream.url,
        credentials:
          upstream.username === "" && upstream.password === ""
            ? undefined
            : { username: upstream.username, password: upstream.password },
        policy: sinks.sinkAddresses ?? createSinkAddressPolicy(NO_SINK_EXCEPTIONS),
        allowHttp: sinks.allowHttpSinks ?? false,
        resolve: sinks.resolveSinkHost,
        clock: deps.clock,
      }),
  });
}

/** The registry's rate limiter over the budgets set; undefined when none is (limits off). */
function registryRateLimiter(
  limits: RegistryRateLimits | undefined,
  auth: RegistryAuthenticator,
  clock: Clock,
): RegistryRateLimiter | undefined {
  if (limits === undefined || (limits.pull === undefined && limits.push === undefined)) return undefined;
  return createRegistryRateLimiter({
    auth,
    buckets: {
      ...(limits.pull ? { pull: createTokenBuckets(limits.pull, clock) } : {}),
      ...(limits.push ? { push: createTokenBuckets(limits.push, clock) } : {}),
    },
  });
}
