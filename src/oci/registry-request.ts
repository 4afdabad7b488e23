import type { IncomingMessage, ServerResponse } from "node:http";
import type { RegistryAudit, RegistryRequestFacts } from "../audit/registry-audit.js";
import type { Issuer } from "../auth/issuer.js";
import type { Clock } from "../core/clock.js";
import type { Principal } from "../core/context.js";
import type { EventRecorder } from "../events/event-recorder.js";
import type { PullEventBuffer } from "../events/pull-event-buffer.js";
import type { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { ReadinessReport } from "../observability/readiness.js";
import type { RegistryMetrics } from "../observability/registry-metrics.js";
import type { BlobUploads } from "../registry/data-plane/blob-uploads.js";
import type { PublicContent } from "../registry/data-plane/public-content.js";
import type { RegistryContent } from "../registry/data-plane/registry-content.js";
import type { RepoResolver, ResolvedName } from "../registry/data-plane/repo-resolver.js";
import type { ParsedManifest } from "../registry/manifest-parser.js";
import type { PullThrough } from "../registry/pull-through/pull-through.js";
import type { PullPolicies } from "../registry/supply-chain/policies/pull-policies.js";
import type { UpstreamDirectory } from "../registry/upstreams/upstream-directory.js";
import type { TrustedProxies } from "../transport/client-address.js";
import type { MirrorNames } from "./mirror-names.js";
import { ociError } from "./oci-errors.js";
import type { RegistryAction, RegistryAuthenticator, RegistryCaller } from "./registry-auth.js";
import type { RegistryGate } from "./registry-gate.js";
import type { RegistryRateLimiter } from "./registry-rate-limit.js";
import { REPOSITORY_NAME } from "./routes.js";

/** Everything the registry handlers use, built once by the composition root. */
export interface RegistryDeps {
  /** Blobs, manifests, tags and their history (the registry domain; the edge never sees the store). */
  content: RegistryContent;
  uploads: BlobUploads;
  resolver: RepoResolver;
  auth: RegistryAuthenticator;
  gate: RegistryGate;
  publicContent: PublicContent;
  issuer: Issuer;
  /** Push events (and the tag and repo events of registry writes), in the writes' transactions. */
  events: EventRecorder;
  /** Pull events, batched off the pull path. */
  pullEvents: PullEventBuffer;
  /** The audit log of pushes, deletes, refusals and (`--audit-pulls`) pulls (ADR 0048); none when omitted. */
  audit?: RegistryAudit | undefined;
  clock: Clock;
  /** Public URL of the registry (the audience of its tokens). */
  registryUrl: string;
  /** Origin of the web console (the API's public URL), allowed read-only CORS (see `applyConsoleCors`). */
  consoleOrigin?: string | undefined;
  /** Answers `/readyz` (never rejects). */
  readiness: () => Promise<ReadinessReport>;
  /** Counts requests, bytes, pushes and pulls; none when omitted. */
  metrics?: RegistryMetrics | undefined;
  /**
   * Told of every committed manifest with a subject, after the push is answered: stores the
   * vulnerability report (ADR 0024) or OpenVEX document (ADR 0059) a referrer carries; `digest` is
   * the referrer's own. Must not reject.
   */
  vulnReferrers?: (args: {
    repoUid: string;
    parsed: ParsedManifest;
    principal: Principal;
    digest?: string;
  }) => Promise<void>;
  /** Charges each routed request to its caller's pull or push budget (ADR 0043); none when limits are off. */
  rateLimit?: RegistryRateLimiter | undefined;
  /** Proxies whose `X-Forwarded-*` headers count (`--trust-proxy`); default none. */
  trustProxy?: TrustedProxies | undefined;
  /**
   * Whether `registryUrl` is the default (`--registry-url` not set): a trusted proxy's forwarded
   * proto and host then build the challenge's token realm, the URL the client reached us by.
   */
  realmFromRequest?: boolean | undefined;
  /**
   * The transparent mirror (`--mirror-upstream`, ADR 0053): maps the repository of each request, and
   * of each `/token` scope, to the upstream cache it stands for; none when no mapping is configured.
   */
  mirror?: MirrorNames | undefined;
  /**
   * The pull-through cache (ADR 0052): pulls in an upstream's namespace (`<org>/<upstream>/<path>`)
   * are served from the upstream and recorded; none when omitted (no upstreams are served).
   */
  pullThrough?: PullThrough | undefined;
  /**
   * Which names are an upstream's pull-through cache namespace (`<org>/<upstream>/…`): pushes
   * there are refused for every caller (ADR 0051). None when omitted.
   */
  upstreams?: UpstreamDirectory | undefined;
  /**
   * Pull policies (ADR 0058): asked on every manifest GET/HEAD once the manifest is known, before
   * anything is answered; an ENFORCE violation is 403 DENIED, a WARN one a `Warning` header. None
   * when omitted (nothing is refused).
   */
  pullPolicy?: PullPolicies | undefined;
}

/** One request/response pair with its parsed URL. */
export interface Exchange {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** HEAD: answer headers only. */
  head: boolean;
  /** The client's address (a trusted proxy's `X-Forwarded-For` counted; see `clientAddressOf`). */
  clientAddress?: string;
  /** The request's id (its `x-request-id` answer header), for the audit log. */
  requestId?: string;
}

/** The audit facts of `ex` made by `principal`. */
export function auditFacts(ex: Exchange, principal: Principal | undefined): RegistryRequestFacts {
  const agent = ex.req.headers["user-agent"];
  return {
    principal,
    requestId: ex.requestId ?? "",
    sourceAddress: ex.clientAddress ?? "",
    userAgent: typeof agent === "string" ? agent : "",
  };
}

/** An authorized request on a repository path. */
export interface Authorized {
  caller: RegistryCaller;
  resolved: ResolvedName;
}

/**
 * Validates `name`, authenticates the caller and checks `action` on the path. For pulls,
 * `publicFallback` (called only in the public namespace) may allow what the caller's own access
 * does not. Throws the OciError to answer.
 */
export async function authorize(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  action: RegistryAction,
  opts: {
    publicFallback?: (resolved: ResolvedName) => Promise<boolean>;
    instead?: readonly Capability[];
  } = {},
): Promise<Authorized> {
  if (name.length > 255 || !REPOSITORY_NAME.test(name)) {
    throw ociError("NAME_INVALID", `"${name.slice(0, 100)}" is not a valid repository name`);
  }
  const caller = await deps.auth.authenticate(ex.req.headers);
  const resolved = await deps.resolver.resolve(name);
  try {
    await deps.gate.require(caller, resolved, action, opts.instead);
  } catch (err) {
    if (opts.publicFallback && deps.gate.isPublic(resolved) && (await opts.publicFallback(resolved))) {
      return { caller, resolved };
    }
    throw err;
  }
  if (action === "push") await refusePushToUpstream(deps, name);
  return { caller, resolved };
}

/**
 * Throws 403 DENIED when `name` is in an upstream's namespace: what is there is the upstream's
 * content as the cache fetched it, so no caller (the platform administrator included) writes it.
 * Checked after the caller's own rights, so only a caller who could otherwise push learns why.
 */
export async function refusePushToUpstream(deps: RegistryDeps, name: string): Promise<void> {
  const target = await deps.upstreams?.lookup(name);
  if (target === undefined) return;
  const { orgName, name: upstream } = target.upstream;
  throw ociError(
    "DENIED",
    `${orgName}/${upstream} is the pull-through cache of upstream ${upstream}: pushes are refused`,
  );
}

/** The repo of an authorized path, or NAME_UNKNOWN. */
export function existingRepo(resolved: ResolvedName) {
  if (!resolved.repo)
    throw ociError("NAME_UNKNOWN", `repository ${resolved.name} is not known to the registry`);
  return resolved.repo;
}

/**
 * Answers 200 with `value` as JSON (`contentType` defaults to application/json) and extra headers;
 * a HEAD request gets the same headers and no body.
 */
export function sendJson(
  ex: Exchange,
  value: unknown,
  headers: Record<string, string> = {},
  contentType = "application/json",
): void {
  const body = JSON.stringify(value);
  ex.res.writeHead(200, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(body),
    ...headers,
  });
  ex.res.end(ex.head ? undefined : body);
}
