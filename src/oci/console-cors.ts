import type { IncomingMessage, ServerResponse } from "node:http";

/** Response headers a script of the console may read (digests, the auth challenge). */
const EXPOSED = "docker-content-digest, www-authenticate, content-length, content-type";

/**
 * Read-only CORS for the web console, which is served by the API port (another origin than the
 * registry's): requests whose `Origin` is exactly `consoleOrigin` may GET and HEAD with an
 * `Authorization` header (tokens, manifests, referrers, tag history). Other methods and origins
 * get no CORS headers, so browsers keep refusing them. Answers a matching preflight itself
 * (204) and returns true; otherwise only adds the headers and returns false.
 */
export function applyConsoleCors(req: IncomingMessage, res: ServerResponse, consoleOrigin: string): boolean {
  const origin = req.headers.origin;
  res.setHeader("vary", "origin");
  if (origin === undefined || origin !== consoleOrigin) return false;
  const method = req.method ?? "GET";
  const wanted = req.headers["access-control-request-method"];
  if (method === "OPTIONS" && typeof wanted === "string") {
    if (wanted !== "GET" && wanted !== "HEAD") return false;
    res.writeHead(204, {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": "GET, HEAD",
      "access-control-allow-headers": "authorization, accept",
      "access-control-max-age": "600",
      "content-length": "0",
    });
    res.end();
    return true;
  }
  if (method === "GET" || method === "HEAD") {
    res.setHeader("access-control-allow-origin", origin);
    res.setHeader("access-control-expose-headers", EXPOSED);
  }
  return false;
}
