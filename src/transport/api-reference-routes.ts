import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import openApiDocument from "../gen/openapi.json" with { type: "json" };
import type { ExtraRoute } from "./create-api-handler.js";
import { once, serveStatic, staticBody } from "./static-answers.js";

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
      handler: serveStatic(
        once(() => staticBody(JSON.stringify(openApiDocument))),
        {
          "content-type": "application/json",
          "cache-control": "no-cache",
          "access-control-allow-origin": "*",
        },
        DOMAIN,
      ),
    },
    {
      path: DOCS_PATH,
      handler: serveStatic(
        once(() => staticBody(DOCS_PAGE)),
        {
          "content-type": "text/html; charset=utf-8",
          "cache-control": "no-cache",
          "content-security-policy": DOCS_CSP,
          "referrer-policy": "no-referrer",
          "x-frame-options": "DENY",
        },
        DOMAIN,
      ),
    },
    {
      path: REDOC_BUNDLE_PATH,
      handler: serveStatic(
        once(async () => staticBody(await readRedocBundle())),
        {
          "content-type": "text/javascript; charset=utf-8",
          "cache-control": "public, max-age=86400",
        },
        DOMAIN,
      ),
    },
  ];
}
