import { type DualRequestListener, type HttpStreamHandler, listenOnePort } from "./one-port-listener.js";

/** Options of {@link startApiServer}. */
export interface ApiServerOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** A handler from `createApiHandler` brings its own `onStream`, used unless `onStream` is given. */
  handler: DualRequestListener & { onStream?: HttpStreamHandler };
  /** Offered HTTP/2 streams first (see `OnePortListenerOptions.onStream`). */
  onStream?: HttpStreamHandler;
}

/** A running API listener. */
export interface ApiServer {
  /** The bound address; `port` is the real one when 0 was requested. */
  readonly address: { host: string; port: number };
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`, default 5 s), then closes every connection. */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Serves `handler` on one TCP port for HTTP/1.1 and h2c (see `listenOnePort`): REST, Connect,
 * gRPC-Web and gRPC all share it. Resolves once listening.
 */
export async function startApiServer(options: ApiServerOptions): Promise<ApiServer> {
  const onStream = options.onStream ?? options.handler.onStream;
  const listener = await listenOnePort({
    host: options.host,
    port: options.port,
    handler: options.handler,
    ...(onStream ? { onStream } : {}),
  });
  return {
    address: { host: listener.address.address, port: listener.address.port },
    close: (closeOptions) => listener.close(closeOptions),
  };
}
