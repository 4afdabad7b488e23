import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import type { TransportFactory } from "../web-transports.js";

/** Options of {@link nodeTransport}. */
export interface NodeTransportOptions {
  /**
   * `connect` (default): the Connect protocol over HTTP/1.1 (or h2c with `httpVersion: "2"`);
   * `grpc`: gRPC over h2c (HTTP/2 without TLS for `http:` URLs).
   */
  protocol?: "connect" | "grpc";
  /** For `connect`: "1.1" (default) or "2". gRPC always uses HTTP/2. */
  httpVersion?: "1.1" | "2";
  /** For `connect`: the binary format instead of JSON. */
  useBinaryFormat?: boolean;
  /** Default deadline of every call. */
  timeoutMs?: number;
}

/**
 * A transport over Node's own http/http2 modules (@connectrpc/connect-node) instead of fetch:
 * gRPC, or Connect over HTTP/2 with one connection for many calls. The client's `fetch` option
 * does not apply to it (the registry helpers and the STS still use fetch).
 */
export function nodeTransport(options: NodeTransportOptions = {}): TransportFactory {
  const timeout = options.timeoutMs === undefined ? {} : { defaultTimeoutMs: options.timeoutMs };
  return ({ baseUrl, interceptors }) =>
    options.protocol === "grpc"
      ? createGrpcTransport({ baseUrl, interceptors, ...timeout })
      : createConnectTransport({
          baseUrl,
          interceptors,
          httpVersion: options.httpVersion ?? "1.1",
          useBinaryFormat: options.useBinaryFormat ?? false,
          ...timeout,
        });
}
