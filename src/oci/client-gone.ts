import type { IncomingMessage } from "node:http";
import { constants, type Http2ServerRequest } from "node:http2";

/** The status logged for a request its client gave up on (nginx's "client closed request"). */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * Whether the client went away before its request was answered, so that `err` (what the handler
 * failed with) is a consequence of that, not a fault of the registry: the connection reached its
 * end (the client closed it) or was reset by the peer. A reset counts only when it is not `err`
 * itself: a storage stream that fails while piped into the response destroys the response, and
 * with it the socket, with its own error. Over HTTP/2 (node's compatibility request): the client
 * cancelled the stream (RST_STREAM CANCEL), or its connection is gone.
 */
export function clientWentAway(req: IncomingMessage, err: unknown): boolean {
  if (req.httpVersionMajor >= 2) {
    const stream = (req as unknown as Http2ServerRequest).stream;
    return stream.rstCode === constants.NGHTTP2_CANCEL || stream.session?.destroyed !== false;
  }
  const socket = req.socket;
  if (socket.readableEnded) return true;
  const reset = socket.errored as NodeJS.ErrnoException | null;
  return reset != null && reset !== err && (reset.code === "ECONNRESET" || reset.code === "EPIPE");
}
