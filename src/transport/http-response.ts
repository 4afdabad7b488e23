import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import type { DomainError } from "../core/errors.js";
import { errorHeaders, httpStatusFor, toStatusJson } from "./error-mapping.js";

/** A request of either server. */
export type AnyRequest = IncomingMessage | Http2ServerRequest;
/** A response of either server. */
export type AnyResponse = ServerResponse | Http2ServerResponse;

/**
 * Writes a complete JSON response. Headers already set with `setHeader` (e.g. `x-request-id`) are
 * kept. If headers were already sent (a failure mid-stream) the response is just ended.
 */
export function sendJson(
  res: AnyResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const bytes = Buffer.from(body, "utf8"); // one UTF-8 pass for both the length and the body
  (res as ServerResponse).writeHead(status, {
    ...headers,
    "content-type": "application/json",
    "content-length": String(bytes.length),
  });
  (res as ServerResponse).end(bytes);
}

/**
 * Writes a domain error as REST JSON (google.rpc.Status) with its HTTP status and headers; an
 * HTTP/1.1 connection is closed after a 413 so the unread body is not parsed as a next request.
 */
export function sendError(
  req: AnyRequest,
  res: AnyResponse,
  err: DomainError,
  domain: string,
  extraHeaders: Record<string, string> = {},
): void {
  const status = httpStatusFor(err);
  const headers = { ...extraHeaders, ...errorHeaders(err) };
  if (status === 413 && req.httpVersionMajor === 1) headers.connection = "close";
  sendJson(res, status, JSON.stringify(toStatusJson(err, domain)), headers);
}
