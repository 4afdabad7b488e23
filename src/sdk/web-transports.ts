import type { Interceptor, Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-web";
import type { FetchFunction } from "./http.js";

/** What a client hands its transport: where the API is, its interceptors (auth, errors), its fetch. */
export interface TransportSettings {
  baseUrl: string;
  interceptors: Interceptor[];
  fetch: FetchFunction;
}

/** Makes the transport of a client from its settings (see `connectWebTransport`, `nodeTransport`). */
export type TransportFactory = (settings: TransportSettings) => Transport;

/**
 * The Connect protocol over fetch (browsers, and Node 20+ over its global fetch): JSON by default,
 * the binary format with `useBinaryFormat`. The default transport of a client.
 */
export function connectWebTransport(
  options: { useBinaryFormat?: boolean; timeoutMs?: number } = {},
): TransportFactory {
  return ({ baseUrl, interceptors, fetch }) =>
    createConnectTransport({
      baseUrl,
      interceptors,
      fetch,
      useBinaryFormat: options.useBinaryFormat ?? false,
      ...(options.timeoutMs === undefined ? {} : { defaultTimeoutMs: options.timeoutMs }),
    });
}

/** gRPC-Web over fetch (binary), for deployments whose proxies pass only gRPC-Web. */
export function grpcWebTransport(options: { timeoutMs?: number } = {}): TransportFactory {
  return ({ baseUrl, interceptors, fetch }) =>
    createGrpcWebTransport({
      baseUrl,
      interceptors,
      fetch,
      ...(options.timeoutMs === undefined ? {} : { defaultTimeoutMs: options.timeoutMs }),
    });
}
