import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { JWKS_PATH, OPENID_CONFIGURATION_PATH } from "./discovery.js";
import type { Issuer } from "./issuer.js";

/**
 * A plain HTTP handler for the HTTP/1.1 and the HTTP/2 server alike. The returned promise never
 * rejects: failures are answered with a JSON error.
 */
export type HttpHandler = (
  req: IncomingMessage | Http2ServerRequest,
  res: ServerResponse | Http2ServerResponse,
) => Promise<void>;

/** One exact path the issuer serves; the handler answers GET and HEAD, and 405 otherwise. */
export interface WellKnownRoute {
  path: string;
  handler: HttpHandler;
}

/** The part of both response classes these handlers use. */
interface ResponseLike {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(): unknown;
  end(body: string): unknown;
}

/** Discovery metadata rarely changes; keys may be added, so the key set is cached for less. */
const DISCOVERY_MAX_AGE_S = 3600;
const JWKS_MAX_AGE_S = 300;

function send(
  req: IncomingMessage | Http2ServerRequest,
  res: ResponseLike,
  status: number,
  body: string,
  headers: Record<string, string>,
): void {
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.setHeader("x-content-type-options", "nosniff");
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  if (req.method === "HEAD") res.end();
  else res.end(body);
}

/** A handler serving the JSON `load()` returns, with an ETag and `Cache-Control: max-age`. */
function jsonDocument(load: () => Promise<unknown> | unknown, maxAgeSeconds: number): HttpHandler {
  return async (req, response) => {
    const res: ResponseLike = response;
    if (req.method !== "GET" && req.method !== "HEAD") {
      const body = JSON.stringify({
        code: 12,
        message: `Method ${req.method} not allowed: use GET`,
        details: [],
      });
      send(req, res, 405, body, { allow: "GET, HEAD" });
      return;
    }
    let body: string;
    try {
      body = JSON.stringify(await load());
    } catch {
      const failure = JSON.stringify({
        code: 13,
        message: "Internal: could not load issuer keys",
        details: [],
      });
      send(req, res, 500, failure, { "cache-control": "no-store" });
      return;
    }
    const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
    const headers = {
      "cache-control": `public, max-age=${maxAgeSeconds}`,
      etag,
      "access-control-allow-origin": "*",
    };
    if (req.headers["if-none-match"] === etag) {
      res.statusCode = 304;
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      res.end();
      return;
    }
    send(req, res, 200, body, headers);
  };
}

/** `GET /.well-known/openid-configuration`: the issuer's OpenID Provider metadata. */
export function createOpenIdConfigurationHandler(issuer: Issuer): HttpHandler {
  return jsonDocument(() => issuer.discovery(), DISCOVERY_MAX_AGE_S);
}

/** `GET /.well-known/jwks.json`: every published verification key of the issuer. */
export function createJwksHandler(issuer: Issuer): HttpHandler {
  return jsonDocument(() => issuer.jwks(), JWKS_MAX_AGE_S);
}

/**
 * Both well-known routes of `issuer`, for the API listener to match by exact path (query string
 * excluded): `/.well-known/openid-configuration` and `/.well-known/jwks.json`.
 */
export function createWellKnownRoutes(issuer: Issuer): WellKnownRoute[] {
  return [
    { path: OPENID_CONFIGURATION_PATH, handler: createOpenIdConfigurationHandler(issuer) },
    { path: JWKS_PATH, handler: createJwksHandler(issuer) },
  ];
}
