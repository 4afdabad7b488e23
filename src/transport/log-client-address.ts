import type { Socket } from "node:net";

/**
 * The client address a request's log line (and span) names: for now the socket's peer address.
 * The one place to change when proxies' `X-Forwarded-For` may count (`--trust-proxy`).
 */
export function logClientAddress(
  socket: Pick<Socket, "remoteAddress"> | null | undefined,
): string | undefined {
  return socket?.remoteAddress;
}
