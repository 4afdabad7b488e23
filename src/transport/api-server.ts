import { unavailable } from "../core/errors.js";
import type { BoundListener } from "./bound-listener.js";
import { NOT_SERVING_RETRY_AFTER_SECONDS, NOT_SERVING_YET } from "./bound-listener.js";
import { DEFAULT_ERROR_DOMAIN } from "./error-mapping.js";
import { type AnyRequest, type AnyResponse, sendError } from "./http-response.js";
import { type DualRequestListener, type HttpStreamHandler, listenOnePort } from "./one-port-listener.js";
import type { TlsTerminator } from "./tls-terminator.js";

/** Options of {@link startApiServer}. */
export interface ApiServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** A handler from `createApiHandler` brings its own `onStream`, used unless `onStream` is given. */
  handler: ApiServerHandler;
  /** Offered HTTP/2 streams first (see `OnePortListenerOptions.onStream`). */
  onStream?: HttpStreamHandler;
}

/** What the API port serves: every request, and optionally HTTP/2 streams first (`onStream`). */
export type ApiServerHandler = DualRequestListener & { onStream?: HttpStreamHandler };

/** A running API listener. */
export interface ApiServer {
  /** The bound address; `port` is the real one when 0 was requested. */
  readonly address: { host: string; port: number };
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`, default 5 s), then closes every connection. */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * The API port bound and not yet serving (see {@link BoundListener}): until `serve`, every request
 * (HTTP/1.1, h2c, gRPC) is answered 503 with google.rpc.Status JSON, code UNAVAILABLE (gRPC and
 * Connect clients read an HTTP 503 as UNAVAILABLE); no HTTP/2 stream is taken raw.
 */
export type BoundApiServer = BoundListener<ApiServerHandler>;

/**
 * Binds one TCP port for HTTP/1.1 and h2c, or with `tls` for HTTPS (h2 and HTTP/1.1 by ALPN; see
 * `listenOnePort`), and resolves once listening, its address known, answering 503 until `serve`
 * gives it its handler (and that handler's `onStream`). Rejects when the port cannot be bound.
 */
export async function bindApiServer(options: {
  host: string;
  port: number;
  /** Serve TLS (h2 and HTTP/1.1 by ALPN) instead of cleartext; see `OnePortListenerOptions.tls`. */
  tls?: TlsTerminator | undefined;
}): Promise<BoundApiServer> {
  let served: { handler: DualRequestListener; onStream: HttpStreamHandler | undefined } | undefined;
  const listener = await listenOnePort({
    host: options.host,
    port: options.port,
    ...(options.tls ? { tls: options.tls } : {}),
    handler: (req, res) => (served ? served.handler(req, res) : answerNotServing(req, res)),
    onStream: (stream, headers) => served?.onStream?.(stream, headers) ?? false,
  });
  return {
    address: { host: listener.address.address, port: listener.address.port },
    serve(handler) {
      if (served) throw new Error("the API listener already serves a handler");
      served = { handler, onStream: handler.onStream };
    },
    close: (closeOptions) => listener.close(closeOptions),
  };
}

/**
 * Serves `handler` on one TCP port for HTTP/1.1 and h2c (see `listenOnePort`): REST, Connect,
 * gRPC-Web and gRPC all share it. Resolves once listening.
 */
export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const bound = await bindApiServer(options);
  const { handler, onStream } = options;
  const withOwnStream: DualRequestListener = (req, res) => handler(req, res);
  bound.serve(onStream ? Object.assign(withOwnStream, { onStream }) : handler);
  return { address: bound.address, close: (closeOptions) => bound.close(closeOptions) };
}

/** The answer before `serve`: 503 UNAVAILABLE, asking the client to retry in a second. */
function answerNotServing(req: AnyRequest, res: AnyResponse): void {
  sendError(req, res, unavailable(NOT_SERVING_YET), DEFAULT_ERROR_DOMAIN, {
    "retry-after": String(NOT_SERVING_RETRY_AFTER_SECONDS),
  });
}
