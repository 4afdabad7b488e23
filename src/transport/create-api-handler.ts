import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { createRegistry, type DescFile } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { type ClientWatch, clientCancelled } from "../core/cancellation.js";
import type { Clock } from "../core/clock.js";
import type { ServiceBinding } from "../core/service.js";
import { withinSpan } from "../core/tracing.js";
import type { ApiMetrics } from "../observability/api-metrics.js";
import type { ApiRateLimiter } from "./api-rate-limit.js";
import {
  clientAddressFrom,
  clientAddressOf,
  NO_TRUSTED_PROXIES,
  type TrustedProxies,
} from "./client-address.js";
import { createConnectRoutes } from "./connect-routes.js";
import { errorDetailsRegistry, httpStatusForCode } from "./error-mapping.js";
import { createGrpcUnary } from "./grpc-unary.js";
import type { AnyRequest, AnyResponse } from "./http-response.js";
import { buildMethodTable } from "./method-table.js";
import type { DualRequestListener, HttpStreamHandler } from "./one-port-listener.js";
import {
  type AccessFactory,
  type Authenticator,
  type CallAuditor,
  type CallRecord,
  createPipeline,
  type Pipeline,
  type Protocol,
  type RequestLogger,
} from "./pipeline.js";
import { createRestTranscoder } from "./rest-transcoder.js";

/** Re-exported so the composition root gets the handler and the listener from one module. */
export {
  type ApiServer,
  type ApiServerOptions,
  type BoundApiServer,
  bindApiServer,
  startApiServer,
} from "./api-server.js";

/**
 * A plain handler for one exact path (e.g. `/.well-known/openid-configuration`), served outside
 * the RPC pipeline: it answers every method itself and must not reject (a rejection is logged and
 * answered 500 if nothing was sent yet).
 */
export interface ExtraRoute {
  path: string;
  /** Serve every path that starts with `path` (only when no exact route or RPC matches). */
  prefix?: boolean;
  /** Serve only this method (other methods fall through to the REST transcoder). */
  method?: string;
  handler: (req: AnyRequest, res: AnyResponse) => void | Promise<void>;
  /** A probe polled every few seconds: counted in the metrics, logged only when its handler throws. */
  quiet?: boolean;
}

/**
 * The handler of GET and HEAD requests that nothing else answers (no RPC, extra route or REST
 * route has the path) and that `accepts` takes: the console's single-page-app fallback.
 */
export interface FallbackRoute {
  /** Whether this request is the fallback's (e.g. a browser navigation: `Accept: text/html`). */
  accepts(req: AnyRequest): boolean;
  handler: ExtraRoute["handler"];
}

/** Options of {@link createApiHandler}. */
export interface ApiHandlerOptions {
  /** Every service served; each method needs a handler and a `platform.annotations.iam` option. */
  bindings: readonly ServiceBinding[];
  /** Verifies bearer tokens of authenticated RPCs. */
  authenticator: Authenticator;
  /** The per-request Access of a principal (`undefined` for IAM-disabled RPCs). */
  accessFor: AccessFactory;
  /** The clock handed to handlers in `RequestContext` and used for log timestamps. */
  clock: Clock;
  /** Receives one structured line per request (never the Authorization header or a token). */
  logger: RequestLogger;
  /** Counts every request by route and outcome (see `Pipeline.finish`); none when omitted. */
  metrics?: ApiMetrics | undefined;
  /** Exact-path routes served before the REST transcoder. */
  extraRoutes?: readonly ExtraRoute[];
  /** Answers unknown GET/HEAD paths it accepts instead of the REST 404 (see {@link FallbackRoute}). */
  fallbackRoute?: FallbackRoute;
  /** Largest accepted request body (REST JSON) or message (Connect/gRPC). Default 4 MiB. */
  maxBodyBytes?: number;
  /** Charges each RPC to its caller's token bucket (ADR 0043); none when limits are off. */
  rateLimit?: ApiRateLimiter | undefined;
  /** Proxies whose `X-Forwarded-For` counts for the logged `clientAddress` (`--trust-proxy`); default none. */
  trustProxy?: TrustedProxies | undefined;
  /** The audit log of mutating calls (ADR 0048); none when omitted. */
  audit?: CallAuditor | undefined;
}

/**
 * The API port's handler: `(req, res)` for every request, and `onStream` for the listener to offer
 * HTTP/2 streams first (it takes unary gRPC calls of bound methods and serves them on the raw
 * stream API; see `OnePortListenerOptions.onStream`).
 */
export type ApiHandler = DualRequestListener & { onStream: HttpStreamHandler };

/** Default request body limit: 4 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

/**
 * Builds the one request handler of the API port, for HTTP/1.1 and HTTP/2 requests alike:
 * `/<package>.<Service>/<Method>` of a bound service → the direct unary gRPC path for plain gRPC
 * over HTTP/2, else the Connect adapter (gRPC-Web, Connect, reflection); an `extraRoutes` path → its handler; a path no REST route has → the fallback route when it accepts the request; anything else → REST transcoder.
 * Every request gets an `x-request-id` response header and exactly one log line. Throws at
 * startup when a binding is incomplete (see `buildMethodTable`) or an HTTP annotation is invalid.
 */
export function createApiHandler(options: ApiHandlerOptions): ApiHandler {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const methods = buildMethodTable(options.bindings);
  const pipeline = createPipeline(options);
  const files = new Set<DescFile>(options.bindings.map((b) => b.service.file));
  const registry = createRegistry(errorDetailsRegistry, ...files);
  const connect = createConnectRoutes({ methods, pipeline, registry, maxBodyBytes });
  const grpcUnary = createGrpcUnary({ methods, pipeline, maxBodyBytes });
  const rest = createRestTranscoder({ methods, pipeline, registry, maxBodyBytes });
  const extra = new Map((options.extraRoutes ?? []).filter((r) => !r.prefix).map((r) => [r.path, r]));
  const prefixed = (options.extraRoutes ?? []).filter((r) => r.prefix);
  const fallback = options.fallbackRoute;
  const trust = options.trustProxy ?? NO_TRUSTED_PROXIES;
  const fallbackFor = (req: AnyRequest, path: string): ExtraRoute | undefined =>
    fallback && (req.method === "GET" || req.method === "HEAD") && !rest.knows(path) && fallback.accepts(req)
      ? { path, handler: fallback.handler }
      : undefined;

  const onStream: HttpStreamHandler = (stream, headers) => {
    const url = headers[":path"] ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    if (!grpcUnary.accepts(path, 2, headers["content-type"])) return false;
    const record = pipeline.begin({
      httpMethod: headers[":method"] ?? "POST",
      path,
      protocol: "grpc",
      requestIdHeader: headers["x-request-id"],
      traceparentHeader: headers.traceparent,
      clientAddress: clientAddressFrom({ peer: stream.session?.socket?.remoteAddress, headers }, trust),
      userAgent: headers["user-agent"],
    });
    // Every answer of this path is HTTP 200 (the outcome is in grpc-status); a stream closed
    // before any answer (the client reset it) is a cancelled call.
    stream.once("close", () => {
      if (!stream.headersSent) clientWentAway(pipeline, record);
      pipeline.finish(record, stream.headersSent ? 200 : CLIENT_CLOSED_REQUEST);
    });
    grpcUnary.handleStream(stream, headers, record);
    return true;
  };

  const handler: DualRequestListener = (req, res) => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q < 0 ? url : url.slice(0, q);
    const isRpc = connect.paths.has(path);
    const extraRoute = isRpc
      ? undefined
      : (extra.get(path) ??
        prefixed.find(
          (r) => path.startsWith(r.path) && (r.method === undefined || r.method === req.method),
        ) ??
        fallbackFor(req, path));
    const record = pipeline.begin({
      httpMethod: req.method ?? "GET",
      path,
      protocol: isRpc ? rpcProtocol(req.headers["content-type"]) : extraRoute ? "http" : "rest",
      requestIdHeader: req.headers["x-request-id"],
      traceparentHeader: req.headers.traceparent,
      quiet: extraRoute?.quiet === true,
      clientAddress: clientAddressOf(req, trust),
      userAgent: req.headers["user-agent"],
    });
    res.setHeader("x-request-id", record.requestId);
    if (isRpc) {
      logWhenDone(
        res,
        () => pipeline.finish(record, res.statusCode),
        () => {
          if (!res.headersSent) clientWentAway(pipeline, record);
          pipeline.finish(record, res.headersSent ? res.statusCode : CLIENT_CLOSED_REQUEST);
        },
      );
      if (grpcUnary.accepts(path, req.httpVersionMajor, req.headers["content-type"])) {
        grpcUnary.handle(req as Http2ServerRequest, res as Http2ServerResponse, record);
      } else {
        connect.handle(req, res, record);
      }
      return;
    }
    if (extraRoute) {
      logWhenDone(res, () => pipeline.finish(record, res.statusCode));
      Promise.resolve()
        .then(() => withinSpan(record.span, () => extraRoute.handler(req, res)))
        .catch((err: unknown) => {
          record.cause = err;
          if (!res.headersSent) {
            res.statusCode = 500;
            res.end();
          }
        });
      return;
    }
    record.cancellation.watch(new ResponseWatch(res, pipeline, record));
    rest(req, res, record)
      .catch((err: unknown) => {
        // Only a failure while writing the response gets here; the socket is likely gone.
        record.cause ??= err;
        if (!res.headersSent) {
          res.statusCode = 500;
          res.end();
        }
      })
      .finally(() => {
        // A client gone before its answer was delivered is a cancelled call, whatever was written.
        if (isClosed(res) && !res.writableFinished) {
          clientWentAway(pipeline, record);
          pipeline.finish(record, CLIENT_CLOSED_REQUEST);
        } else pipeline.finish(record, res.statusCode);
      });
  };
  return Object.assign(handler, { onStream });
}

/** The status logged for a call whose client went away before it was answered: 499, as for CANCELLED. */
const CLIENT_CLOSED_REQUEST = httpStatusForCode(Code.Canceled);

/**
 * Gives the call up as CANCELLED (its handler's signal fires: store work stops, nothing commits)
 * and records that outcome; nothing is left to answer.
 */
function clientWentAway(pipeline: Pipeline, record: CallRecord): void {
  if (record.cancellation.abort(clientCancelled())) pipeline.fail(record, null);
}

/** Whether the response's stream or connection closed (for good, or because the client left). */
function isClosed(res: AnyResponse): boolean {
  return "stream" in res ? res.stream.destroyed : res.destroyed;
}

/**
 * A REST call's client, watched through its response: gone once the response closed with nothing
 * written. Listening (a `close` listener) starts only when the call's signal is made (a write, an
 * image description): then the call is given up and logged as 499 at once, while its handler
 * winds down.
 */
class ResponseWatch implements ClientWatch {
  constructor(
    private readonly res: AnyResponse,
    private readonly pipeline: Pipeline,
    private readonly record: CallRecord,
  ) {}

  gone(): boolean {
    return !this.res.headersSent && isClosed(this.res);
  }

  listen(): void {
    this.res.once("close", () => {
      if (this.res.headersSent) return;
      clientWentAway(this.pipeline, this.record);
      this.pipeline.finish(this.record, CLIENT_CLOSED_REQUEST);
    });
  }
}

/**
 * Calls `finish` when the response finishes and `close` (default: `finish`) when its stream closes
 * (the first to run logs the record).
 */
function logWhenDone(res: AnyResponse, finish: () => void, close: () => void = finish): void {
  res.once("finish", finish);
  res.once("close", close);
}

function rpcProtocol(contentType: string | undefined): Protocol {
  if (contentType?.startsWith("application/grpc-web")) return "grpc-web";
  if (contentType?.startsWith("application/grpc")) return "grpc";
  return "connect";
}
