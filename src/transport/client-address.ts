import type { ServerHttp2Stream } from "node:http2";
import type { AnyRequest } from "./http-response.js";

/**
 * The client address of a request on either port: today the socket peer's address (undefined
 * once the socket is gone). Rate limiting keys anonymous callers by it (ADR 0043); this is the one
 * place that decides it, so trusting a proxy's `X-Forwarded-For` changes only this function.
 */
export function clientAddressOf(req: AnyRequest): string | undefined {
  return req.socket?.remoteAddress;
}

/** {@link clientAddressOf} for a request served on node's raw HTTP/2 stream API (unary gRPC). */
export function streamClientAddressOf(stream: ServerHttp2Stream): string | undefined {
  return stream.session?.socket?.remoteAddress;
}
