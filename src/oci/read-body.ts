import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";

/**
 * Reads a whole request body of at most `limit` bytes. Over the limit (by Content-Length up front,
 * or while streaming), `tooLarge` is called and the rest of the body is discarded.
 */
export async function readBody(req: IncomingMessage, limit: number, tooLarge: () => never): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  if (declared > limit) {
    req.resume();
    tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      tooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}

/**
 * Whether a request has a body to read: a Content-Length above 0, or none and a body that follows
 * anyway (HTTP/1.1 `Transfer-Encoding: chunked`; over HTTP/2, DATA frames after headers that did
 * not end the stream: HTTP/2 has no Transfer-Encoding).
 */
export function hasRequestBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  if (length !== undefined && req.headers["transfer-encoding"] === undefined) return Number(length) > 0;
  if (req.httpVersionMajor >= 2) return !(req as unknown as Http2ServerRequest).stream.endAfterHeaders;
  return req.headers["transfer-encoding"] !== undefined;
}
