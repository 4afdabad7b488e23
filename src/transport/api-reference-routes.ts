import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import openApiDocument from "../gen/openapi.json" with { type: "json" };
import type { ExtraRoute } from "./create-api-handler.js";
import { methodNotAllowed } from "./error-mapping.js";
import { type AnyRequest, type AnyResponse, sendError } from "./http-response.js";

/** Where the OpenAPI 3.1 document of the REST API is served. */
export const OPENAPI_PATH = "/openapi.json";
/** Where the API reference page is served. */
export const DOCS_PATH = "/docs";
/** Where the reference page's renderer (Redoc's standalone bundle, from node_modules) is served. */
export const REDOC_BUNDLE_PATH = "/docs/redoc.standalone.js";

/**
 * The page's Content-Security-Policy: everything from this origin only, no inline scripts, nothing
 * framing it. Redoc needs two local allowances: inline styles (its CSS-in-JS inserts `<style>`
 * elements at run time) and a search worker it starts from a `blob:` URL of its own code.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

const DOMAIN = "wharf.dev";

// Relative URLs, so the page also works behind a proxy that serves the API under a path prefix.
const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Wharf platform API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<redoc spec-url="${OPENAPI_PATH.slice(1)}" expand-responses="200" required-props-first="true"></redoc>
<script src="${REDOC_BUNDLE_PATH.slice(1)}"></script>
</body>
</html>
`;

/** One fixed answer in both encodings, each with its own ETag (they are different representations). */
interface StaticBody {
  identity: Encoded;
  gzip: Encoded;
}

interface Encoded {
  bytes: Buffer;
  etag: string;
}

const gzipAsync = promisify(gzip);

async function staticBody(text: string | Buffer): Promise<StaticBody> {
  const bytes = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  const tag = createHash("sha256").update(bytes).digest("base64url").slice(0, 27);
  return {
    identity: { bytes, etag: `"${tag}"` },
    gzip: { bytes: await gzipAsync(bytes, { level: 9 }), etag: `"${tag}-gzip"` },
  };
}

/**
 * Redoc's sidebar footer loads its logo from Redocly's CDN, which the page's CSP refuses (and a
 * reference served "with no network at run time" should not ask for): the bundle is served with
 * that one URL replaced by an empty local image.
 */
const REDOC_CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";
const EMPTY_SVG = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";

/** Redoc's standalone bundle as served: the installed file with no URL of a CDN left in it. */
async function readRedocBundle(): Promise<Buffer> {
  const file = await readFile(
    createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js"),
    "utf8",
  );
  return Buffer.from(file.replaceAll(REDOC_CDN_LOGO, EMPTY_SVG), "utf8");
}

/** Runs `load` once, on first use (off the event loop's startup path), and keeps its answer. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= load();
    return value;
  };
}

/** True when the request's Accept-Encoding takes gzip (not refused with `q=0`). */
function acceptsGzip(req: AnyRequest): boolean {
  const header = req.headers["accept-encoding"];
  if (typeof header !== "string") return false;
  return header.split(",").some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(";");
    const refused = params.some((p) => /^\s*q=0(\.0*)?\s*$/.test(p));
    return (coding === "gzip" || coding === "*") && !refused;
  });
}

/**
 * The API reference routes, anonymous, GET or HEAD (other methods: 405 as google.rpc.Status):
 * `/openapi.json` (the document generated from the protos, src/gen/openapi.json), `/docs` (a page
 * rendering it with Redoc, under {@link DOCS_CSP}) and `/docs/redoc.standalone.js` (Redoc's
 * bundle, read from the installed `redoc` package on first use: no network at run time). Each
 * answer is gzipped when the client accepts it, has an ETag per encoding and honours
 * `If-None-Match` with 304.
 */
export function createApiReferenceRoutes(): ExtraRoute[] {
  return [
    {
      path: OPENAPI_PATH,
      handler: serve(
        once(() => staticBody(JSON.stringify(openApiDocument))),
        {
          "content-type": "application/json",
          "cache-control": "no-cache",
          "access-control-allow-origin": "*",
        },
      ),
    },
    {
      path: DOCS_PATH,
      handler: serve(
        once(() => staticBody(DOCS_PAGE)),
        {
          "content-type": "text/html; charset=utf-8",
          "cache-control": "no-cache",
          "content-security-policy": DOCS_CSP,
          "referrer-policy": "no-referrer",
          "x-frame-options": "DENY",
        },
      ),
    },
    {
      path: REDOC_BUNDLE_PATH,
      handler: serve(
        once(async () => staticBody(await readRedocBundle())),
        {
          "content-type": "text/javascript; charset=utf-8",
          "cache-control": "public, max-age=86400",
        },
      ),
    },
  ];
}

/** A GET/HEAD handler answering `body()` with `headers`. */
function serve(body: () => Promise<StaticBody>, headers: Record<string, string>): ExtraRoute["handler"] {
  return async (req, res) => {
    if (!isRead(req, res)) return;
    answer(req, res, await body(), headers);
  };
}

function isRead(req: AnyRequest, res: AnyResponse): boolean {
  if (req.method === "GET" || req.method === "HEAD") return true;
  const err = methodNotAllowed(req.method ?? "", req.url ?? "", ["GET", "HEAD"]);
  sendError(req, res, err, DOMAIN, { allow: "GET, HEAD" });
  return false;
}

function answer(req: AnyRequest, res: AnyResponse, both: StaticBody, headers: Record<string, string>): void {
  const gzip = acceptsGzip(req);
  const body = gzip ? both.gzip : both.identity;
  const common: Record<string, string> = {
    ...headers,
    etag: body.etag,
    vary: "accept-encoding",
    "x-content-type-options": "nosniff",
  };
  if (gzip) common["content-encoding"] = "gzip";
  if (req.headers["if-none-match"] === body.etag) {
    (res as ServerResponse).writeHead(304, common);
    (res as ServerResponse).end();
    return;
  }
  (res as ServerResponse).writeHead(200, { ...common, "content-length": String(body.bytes.length) });
  (res as ServerResponse).end(req.method === "HEAD" ? undefined : body.bytes);
}
