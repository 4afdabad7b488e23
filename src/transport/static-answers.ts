import { createHash } from "node:crypto";
import type { ServerResponse } from "node:http";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { ExtraRoute } from "./create-api-handler.js";
import { methodNotAllowed } from "./error-mapping.js";
import { type AnyRequest, type AnyResponse, sendError } from "./http-response.js";

/** One fixed answer in both encodings, each with its own ETag (they are different representations). */
export interface StaticBody {
  identity: Encoded;
  gzip: Encoded;
}

interface Encoded {
  bytes: Buffer;
  etag: string;
}

const gzipAsync = promisify(gzip);

/** `text` (UTF-8) or bytes as a {@link StaticBody}: gzipped once (level 9), with a content-hash ETag. */
export async function staticBody(text: string | Buffer): Promise<StaticBody> {
  const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  const tag = createHash("sha256").update(bytes).digest("base64url").slice(0, 27);
  return {
    identity: { bytes, etag: `"${tag}"` },
    gzip: { bytes: await gzipAsync(bytes, { level: 9 }), etag: `"${tag}-gzip"` },
  };
}

/** Runs `load` once, on first use (off the event loop's startup path), and keeps its answer. */
export function once<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= load();
    return value;
  };
}

/** True when the request's Accept-Encoding takes gzip (not refused with `q=0`). */
export function acceptsGzip(req: AnyRequest): boolean {
  const header = req.headers["accept-encoding"];
  if (typeof header !== "string") return false;
  return header.split(",").some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    const refused = params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
    return (coding === "gzip" || coding === "*") && !refused;
  });
}

/** A GET/HEAD handler answering `body()` with `headers` (other methods: 405 in `domain`). */
export function serveStatic(
  body: () => Promise<StaticBody>,
  headers: Record<string, string>,
  domain: string,
): ExtraRoute["handler"] {
  return async (req, res) => {
    if (!isRead(req, res, domain)) return;
    answerStatic(req, res, await body(), headers);
  };
}

/**
 * True for GET and HEAD; for any other method answers 405 (google.rpc.Status in `domain`, with
 * `Allow: GET, HEAD`) and returns false.
 */
export function isRead(req: AnyRequest, res: AnyResponse, domain: string): boolean {
  if (req.method === "GET" || req.method === "HEAD") return true;
  const err = methodNotAllowed(req.method ?? "", req.url ?? "", ["GET", "HEAD"]);
  sendError(req, res, err, domain, { allow: "GET, HEAD" });
  return false;
}

/**
 * Answers `both` with `status` (default 200): gzipped when the client accepts it, with the
 * encoding's ETag, `Vary: accept-encoding` and `nosniff`; 304 when `If-None-Match` names the ETag
 * (only for 200 answers); no body for HEAD.
 */
export function answerStatic(
  req: AnyRequest,
  res: AnyResponse,
  both: StaticBody,
  headers: Record<string, string>,
  status = 200,
): void {
  const gzip = acceptsGzip(req);
  const body = gzip ? both.gzip : both.identity;
  const common: Record<string, string> = {
    ...headers,
    etag: body.etag,
    vary: "accept-encoding",
    "x-content-type-options": "nosniff",
  };
  if (gzip) common["content-encoding"] = "gzip";
  if (status === 200 && req.headers["if-none-match"] === body.etag) {
    (res as ServerResponse).writeHead(304, common);
    (res as ServerResponse).end();
    return;
  }
  (res as ServerResponse).writeHead(status, { ...common, "content-length": String(body.bytes.length) });
  (res as ServerResponse).end(req.method === "HEAD" ? undefined : body.bytes);
}
