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
  /**
   * Certificate authorities (PEM) to trust for an `https:` URL instead of the system's: a server
   * whose certificate a private CA signed (`wharf serve --tls-cert`). Default: the system's.
   */
  ca?: string | Buffer | (string | Buffer)[];
}

/**
 * A transport over Node's own http/http2 modules (@connectrpc/connect-node) instead of fetch:
 * gRPC, or Connect over HTTP/2 with one connection for many calls. The client's `fetch` option
 * does not apply to it (the registry helpers and the STS still use fetch).
 */
export function nodeTransport(options: NodeTransportOptions = {}): TransportFactory {
  const timeout = options.timeoutMs === undefined ? {} : { defaultTimeoutMs: options.timeoutMs };
  const tls = options.ca === undefined ? {} : { nodeOptions: { ca: options.ca } };
  return ({ baseUrl, interceptors }) =>
    options.protocol === "grpc"
      ? createGrpcTransport({ baseUrl, interceptors, ...timeout, ...tls })
      : options.httpVersion === "2"
        ? createConnectTransport({
            baseUrl,
            interceptors,
            httpVersion: "2",
            useBinaryFormat: options.useBinaryFormat ?? false,
            ...timeout,
            ...tls,
          })
        : createConnectTransport({
            baseUrl,
            interceptors,
            httpVersion: "1.1",
            useBinaryFormat: options.useBinaryFormat ?? false,
            ...timeout,
            ...tls,
          });
}
