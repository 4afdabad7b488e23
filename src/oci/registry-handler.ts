import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Principal } from "../core/context.js";
import { startRequestTrace, withinSpan } from "../core/tracing.js";
import { HEALTHZ_PATH, READYZ_PATH, readinessAnswer } from "../observability/readiness.js";
import { clientAddressOf, forwardedOriginOf, NO_TRUSTED_PROXIES } from "../transport/client-address.js";
import { deleteBlob, getBlob } from "./blob-handlers.js";
import { CLIENT_CLOSED_REQUEST, clientWentAway } from "./client-gone.js";
import { applyConsoleCors } from "./console-cors.js";
import { withForwardedRealm } from "./forwarded-realm.js";
import { tagHistory } from "./history-handler.js";
import { deleteManifest, getManifest, putManifest } from "./manifest-handlers.js";
import {
  ContentDamagedOciError,
  ContentLostError,
  OciError,
  ociError,
  sendOciError,
  toOciError,
} from "./oci-errors.js";
import { listReferrers } from "./referrers-handler.js";
import { auditRefusal } from "./refusal-audit.js";
import type { Exchange, RegistryDeps } from "./registry-request.js";
import { matchRoute, type RegistryRoute } from "./routes.js";
import { listTags } from "./tag-list-handler.js";
import { issueRegistryToken } from "./token-endpoint.js";
import { cancelUpload, finishUpload, patchUpload, startUpload, uploadStatus } from "./upload-handlers.js";

type Handler = (deps: RegistryDeps, ex: Exchange) => Promise<void>;

/** The handler of each route and method; a method not listed is 405 UNSUPPORTED. */
function handlerFor(route: RegistryRoute, method: string): Handler | undefined {
  const read = method === "GET" || method === "HEAD";
  switch (route.kind) {
    case "base":
      return read ? base : undefined;
    case "token":
      return method === "GET" || method === "POST" ? issueRegistryToken : undefined;
    case "blob":
      if (read) return (d, ex) => getBlob(d, ex, route.name, route.digest);
      return method === "DELETE" ? (d, ex) => deleteBlob(d, ex, route.name, route.digest) : undefined;
    case "uploads":
      return method === "POST" ? (d, ex) => startUpload(d, ex, route.name) : undefined;
    case "upload":
      if (method === "PATCH") return (d, ex) => patchUpload(d, ex, route.name, route.id);
      if (method === "PUT") return (d, ex) => finishUpload(d, ex, route.name, route.id);
      if (method === "GET") return (d, ex) => uploadStatus(d, ex, route.name, route.id);
      return method === "DELETE" ? (d, ex) => cancelUpload(d, ex, route.name, route.id) : undefined;
    case "manifest":
      if (read) return (d, ex) => getManifest(d, ex, route.name, route.reference);
      if (method === "PUT") return (d, ex) => putManifest(d, ex, route.name, route.reference);
      return method === "DELETE" ? (d, ex) => deleteManifest(d, ex, route.name, route.reference) : undefined;
    case "tags":
      return read ? (d, ex) => listTags(d, ex, route.name) : undefined;
    case "referrers":
      return read ? (d, ex) => listReferrers(d, ex, route.name, route.digest) : undefined;
    case "history":
      return read ? (d, ex) => tagHistory(d, ex, route.name, route.tag) : undefined;
  }
}

/** `/v2/`: 200 for any verified registry token (anonymous included), else the challenge. */
async function base(deps: RegistryDeps, ex: Exchange): Promise<void> {
  const caller = await deps.auth.authenticate(ex.req.headers);
  if (caller.principal === undefined) throw deps.auth.challenge("authentication required");
  ex.res.writeHead(200, { "content-type": "application/json", "content-length": 2 });
  ex.res.end(ex.head ? undefined : "{}");
}

/**
 * `deps` for one request, its authenticator telling `seen` each caller it verifies (the identity
 * the request's log line names).
 */
function watchingCaller(deps: RegistryDeps, seen: (principal: Principal | undefined) => void): RegistryDeps {
  const auth: RegistryDeps["auth"] = Object.create(deps.auth);
  auth.authenticate = async (headers, opts) => {
    const caller = await deps.auth.authenticate(headers, opts);
    seen(caller.principal);
    return caller;
  };
  return { ...deps, auth };
}

/**
 * The registry's request handler: routes by path shape, charges the request to its caller's pull
 * or push budget when those are limited (ADR 0043), answers every failure with the OCI error
 * envelope (a trusted proxy's origin in the token realm: ADR 0039), logs one structured line per request in the schema of ADR 0041 (`msg` "request",
 * `requestId`, `traceId`, `service` "registry", `route` (the route kind, `unmatched` for none),
 * `status`, `durationMs`, `identityUid` (null when anonymous), `clientAddress`, and `method`,
 * `path`, `error` (the OCI code) — never credentials) and counts it in the metrics by route kind.
 * A repository path is first mapped by the transparent mirror (`deps.mirror`, ADR 0053; the line
 * then has `ns` and `mirroredTo`).
 * Each request runs in its server span (with tracing on), continuing an incoming `traceparent`.
 * `/healthz` and `/readyz` answer anonymously and are not logged.
 */
export function createRegistryHandler(deps: RegistryDeps, logger: (line: object) => void) {
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://registry.invalid");
    if (url.pathname === HEALTHZ_PATH || url.pathname === READYZ_PATH) {
      await answerProbe(deps, req, res, url.pathname);
      return;
    }
    if (deps.consoleOrigin && applyConsoleCors(req, res, deps.consoleOrigin)) return;
    const trust = deps.trustProxy ?? NO_TRUSTED_PROXIES;
    const clientAddress = clientAddressOf(req, trust);
    const requestId = randomUUID();
    const ex: Exchange = { req, res, url, head: method === "HEAD", clientAddress, requestId };
    const trace = startRequestTrace(`${method} registry`, req.headers.traceparent, {
      "http.request.method": method,
      "url.path": url.pathname,
    });
    let identityUid: string | undefined;
    let principal: Principal | undefined;
    const requestDeps = watchingCaller(deps, (seen) => {
      identityUid ??= seen?.identityUid;
      principal ??= seen;
    });
    res.setHeader("docker-distribution-api-version", "registry/2.0");
    res.setHeader("x-request-id", requestId);
    let error: OciError | undefined;
    let cancelled = false;
    let route: RegistryRoute | undefined;
    let mirroredTo: string | undefined;
    try {
      route = matchRoute(url.pathname);
      if (!route) throw ociError("NAME_UNKNOWN", `no registry endpoint at ${url.pathname.slice(0, 200)}`);
      if (deps.mirror && "name" in route) {
        const name = await deps.mirror.map(route.name, url.searchParams.get("ns") ?? undefined);
        if (name !== route.name) {
          mirroredTo = name;
          route = { ...route, name };
        }
      }
      trace.span?.rename(`${method} registry ${route.kind}`);
      const handler = handlerFor(route, method);
      if (!handler) throw new OciError("UNSUPPORTED", `${method} is not supported here`, undefined, {}, 405);
      if (deps.rateLimit) await deps.rateLimit.charge(req, res, route, clientAddress);
      await withinSpan(trace.span, () => handler(requestDeps, ex));
    } catch (err) {
      if (clientWentAway(req, err)) {
        // A cancelled request, as the API logs it: nobody is left to answer, and no fault of ours.
        cancelled = true;
        res.destroy();
      } else {
        error = toOciError(err);
        if (deps.realmFromRequest) {
          const facts = { peer: req.socket?.remoteAddress, headers: req.headers, secure: isSecure(req) };
          const origin = forwardedOriginOf(facts, trust);
          if (origin !== undefined) error = withForwardedRealm(error, deps.auth.realm, origin);
        }
        const traceId = trace.traceId;
        if (error instanceof ContentDamagedOciError)
          logger({
            level: "error",
            msg: "blob storage content does not match its record",
            requestId,
            traceId,
            error: `blob storage content does not match its record: ${error.key} holds ${error.storedSize} bytes, recorded ${error.expectedSize} (run wharf fsck)`,
          });
        else if (error.code === "INTERNAL")
          logger({
            level: "error",
            msg: "registry request failed",
            requestId,
            traceId,
            error: String((err as Error)?.stack ?? err),
          });
        if (error instanceof ContentLostError)
          logger({
            level: "error",
            msg: "content missing from blob storage",
            requestId,
            traceId,
            error: `content missing from blob storage: ${error.key}`,
          });
        // Bytes the client is still sending would otherwise be parsed as the next request (HTTP/1.1
        // only: an HTTP/2 stream ends alone, and HTTP/2 has no Connection header).
        if (!req.readableEnded && req.httpVersionMajor === 1) res.setHeader("connection", "close");
        sendOciError(res, error, ex.head);
        auditRefusal(deps, ex, route, error, principal);
      }
    } finally {
      const seconds = (performance.now() - started) / 1000;
      const status = cancelled ? CLIENT_CLOSED_REQUEST : res.statusCode;
      deps.metrics?.observe(route?.kind ?? "unmatched", method, status, seconds);
      if (trace.span !== undefined) {
        trace.span.setAttributes({ "http.response.status_code": status, "wharf.identity_uid": identityUid });
        if (status >= 500) trace.span.fail(new Error(error?.code ?? `HTTP ${status}`));
        trace.span.end();
      }
      logger({
        // A fault's cause has its own error line (above); the request line of a 5xx warns.
        level: status >= 500 && !cancelled ? "warn" : "info",
        msg: "request",
        requestId,
        traceId: trace.traceId,
        service: "registry",
        route: route?.kind ?? "unmatched",
        status,
        durationMs: Math.round(seconds * 100_000) / 100,
        identityUid: identityUid ?? null,
        clientAddress: clientAddress || null,
        method,
        path: url.pathname,
        ...mirrorFields(url, mirroredTo),
        ...(cancelled ? { error: "CANCELLED" } : error ? { error: error.code } : {}),
      });
    }
  };
}

/**
 * The log fields of a mirror request (ADR 0053): `ns`, containerd's registry host query, when
 * given, and `mirroredTo`, the repository the mirror mapping served the request from.
 */
function mirrorFields(url: URL, mirroredTo: string | undefined): Record<string, string> {
  const ns = url.searchParams.get("ns");
  return {
    ...(ns === null ? {} : { ns: ns.slice(0, 100) }),
    ...(mirroredTo === undefined ? {} : { mirroredTo }),
  };
}

/** Whether the request came over TLS (its socket, or its HTTP/2 session's, is encrypted). */
function isSecure(req: IncomingMessage): boolean {
  return (req.socket as { encrypted?: boolean } | null)?.encrypted === true;
}

/** `/healthz` (200 `ok`) and `/readyz` (200, or 503 naming the failing part), GET or HEAD only. */
async function answerProbe(
  deps: RegistryDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    sendOciError(res, new OciError("UNSUPPORTED", `${req.method} is not supported here`, undefined, {}, 405));
    return;
  }
  let status = 200;
  let body = "ok\n";
  let type = "text/plain; charset=utf-8";
  if (path === READYZ_PATH) {
    ({ status, body } = readinessAnswer(await deps.readiness()));
    type = "application/json";
  }
  res.writeHead(status, {
    "content-type": type,
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  res.end(req.method === "HEAD" ? undefined : body);
}
