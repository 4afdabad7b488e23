import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { ExtraRoute, FallbackRoute } from "./create-api-handler.js";
import type { AnyRequest, AnyResponse } from "./http-response.js";
import { answerStatic, isRead, once, type StaticBody, staticBody } from "./static-answers.js";

/** Where the console's hashed assets are served (Vite's `assets/` folder). */
export const CONSOLE_ASSETS_PATH = "/assets/";

/** The console built by `npm run build` (Vite, from console/): dist/console beside dist/transport. */
export const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL("../../dist/console/", import.meta.url));

/**
 * The console's Content-Security-Policy: scripts, styles and images from this origin only, API
 * calls to this origin and `connectOrigins` (the registry's, for tag history and manifests); no
 * inline script or style element, no plugins, no framing, no form posting elsewhere.
 */
export function consoleCsp(connectOrigins: readonly string[] = []): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src ${["'self'", ...connectOrigins].join(" ")}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

const DOMAIN = "wharf.dev";

function pageHeaders(csp: string): Record<string, string> {
  return {
    "content-type": "text/html; charset=utf-8",
    "cache-control": "no-cache",
    "content-security-policy": csp,
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
  };
}

/** Hashed file names (`index-3fa9c2.js`): nothing else is looked up on disk. */
const ASSET_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*\.(js|css|svg|png|woff2|map)$/;

const ASSET_TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  woff2: "font/woff2",
  map: "application/json",
};

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Wharf console not built</title></head>
<body>
<h1>The Wharf console is not built</h1>
<p>This server has no console bundle. Build it with <code>npm run build</code> (also run by
<code>npm ci</code>) and restart <code>wharf serve</code>. The API answers on this port as usual.</p>
</body>
</html>
`;

const ASSET_NOT_FOUND_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Not found</title></head>
<body><h1>Not found</h1><p>No such console file.</p></body></html>
`;

/** Options of {@link createConsoleRoutes}. */
export interface ConsoleRoutesOptions {
  /** The built console (index.html and assets/); default {@link DEFAULT_CONSOLE_DIR}. */
  dir?: string;
  /** Other origins the console calls (the registry's). */
  connectOrigins?: readonly string[];
}

/** The console's routes and its single-page-app fallback, for `createApiHandler`. */
export interface ConsoleRoutes {
  routes: ExtraRoute[];
  fallback: FallbackRoute;
}

/**
 * Serves the web console on the API port, anonymously (the app signs in itself):
 * - `GET /` and every GET/HEAD no API route has whose `Accept` takes text/html (a browser
 *   navigation to `/orgs/…`): `index.html`, `no-cache`, under {@link consoleCsp};
 * - `GET /assets/<hashed name>`: the bundle's files, cached for a year as immutable;
 * - when the console was not built: 503 with a page saying how to build it (assets: 404).
 * API paths keep precedence: the fallback runs only for paths no RPC, plain or REST route has.
 * Files are read on first use and kept in memory, gzipped, with ETags (304 on `If-None-Match`).
 */
export function createConsoleRoutes(options: ConsoleRoutesOptions = {}): ConsoleRoutes {
  const dir = options.dir ?? DEFAULT_CONSOLE_DIR;
  const headers = pageHeaders(consoleCsp(options.connectOrigins?.filter((o) => o !== "") ?? []));
  const index = once(async () => {
    try {
      return { built: true, body: await staticBody(await readFile(`${dir}/index.html`)) };
    } catch {
      return { built: false, body: await staticBody(NOT_BUILT_PAGE) };
    }
  });
  const notFound = once(() => staticBody(ASSET_NOT_FOUND_PAGE));
  const assets = new Map<string, Promise<StaticBody | undefined>>();
  const asset = (name: string): Promise<StaticBody | undefined> => {
    let body = assets.get(name);
    if (!body) {
      body = readFile(`${dir}/assets/${name}`).then(staticBody, () => undefined);
      // A missing file is not remembered: a build made while the server runs is picked up.
      body.then((b) => b ?? assets.delete(name));
      assets.set(name, body);
    }
    return body;
  };

  const page = async (req: AnyRequest, res: AnyResponse): Promise<void> => {
    if (!isRead(req, res, DOMAIN)) return;
    const { built, body } = await index();
    answerStatic(req, res, body, headers, built ? 200 : 503);
  };

  return {
    routes: [
      { path: "/", handler: page },
      {
        path: CONSOLE_ASSETS_PATH,
        prefix: true,
        handler: async (req, res) => {
          if (!isRead(req, res, DOMAIN)) return;
          const name = (req.url ?? "").split("?")[0]!.slice(CONSOLE_ASSETS_PATH.length);
          const match = ASSET_NAME.exec(name);
          const body = match ? await asset(name) : undefined;
          if (!match || !body) {
            answerStatic(req, res, await notFound(), headers, 404);
            return;
          }
          answerStatic(req, res, body, {
            "content-type": ASSET_TYPES[match[1]!]!,
            "cache-control": "public, max-age=31536000, immutable",
          });
        },
      },
    ],
    fallback: { accepts: acceptsHtml, handler: page },
  };
}

/** A browser navigation: the Accept header names text/html (fetch and API clients do not). */
function acceptsHtml(req: AnyRequest): boolean {
  const accept = req.headers.accept;
  return typeof accept === "string" && accept.toLowerCase().includes("text/html");
}
