import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { consoleCsp, createConsoleRoutes } from "../../../src/transport/console-routes.js";
import { plainRequest } from "../../support/plain-http.js";

/** Serves `createConsoleRoutes({ dir })` as the API handler would: exact `/`, the assets prefix, else the fallback. */
async function serveConsole(dir: string): Promise<{ url: string; server: Server }> {
  const { routes, fallback } = createConsoleRoutes({ dir });
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0]!;
    const route = routes.find((r) => (r.prefix ? path.startsWith(r.path) : path === r.path));
    void (route ?? fallback).handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const HTML = { accept: "text/html,application/xhtml+xml" };

describe("console routes", () => {
  let built: string;
  let missing: string;
  let app: { url: string; server: Server };
  let none: { url: string; server: Server };

  before(async () => {
    built = await mkdtemp(join(tmpdir(), "wharf-console-"));
    await mkdir(join(built, "assets"));
    await writeFile(join(built, "index.html"), '<!doctype html><div id="root"></div>');
    await writeFile(join(built, "assets", "index-abc123.js"), "console.log('hi');".repeat(50));
    await writeFile(join(built, "secret.txt"), "not served");
    missing = join(built, "does-not-exist");
    app = await serveConsole(built);
    none = await serveConsole(missing);
  });
  after(async () => {
    app.server.close();
    none.server.close();
    await rm(built, { recursive: true, force: true });
  });

  it("serves index.html uncached under the strict CSP, and 304 for its ETag", async () => {
    const res = await plainRequest(`${app.url}/`, { headers: HTML });
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), '<!doctype html><div id="root"></div>');
    assert.equal(res.headers["content-type"], "text/html; charset=utf-8");
    assert.equal(res.headers["cache-control"], "no-cache");
    assert.equal(res.headers["content-security-policy"], consoleCsp());
    assert.match(consoleCsp(), /script-src 'self'(;|$)/, "no inline or remote scripts");
    assert.match(consoleCsp(), /frame-ancestors 'none'/);
    assert.equal(res.headers["x-frame-options"], "DENY");
    const again = await plainRequest(`${app.url}/`, {
      headers: { "if-none-match": String(res.headers.etag) },
    });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
  });

  it("serves hashed assets as immutable for a year, gzipped when asked", async () => {
    const res = await plainRequest(`${app.url}/assets/index-abc123.js`, {
      headers: { "accept-encoding": "gzip" },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers["content-type"], "text/javascript; charset=utf-8");
    assert.equal(res.headers["cache-control"], "public, max-age=31536000, immutable");
    assert.equal(res.headers["content-encoding"], "gzip");
    assert.equal(gunzipSync(res.body).toString(), "console.log('hi');".repeat(50));
  });

  it("answers 404 for unknown assets and for names that try to leave assets/", async () => {
    for (const path of ["/assets/nope.js", "/assets/..%2fsecret.txt", "/assets/a.exe", "/assets/"]) {
      const res = await plainRequest(`${app.url}${path}`);
      assert.equal(res.status, 404, path);
    }
    // A client normalizes `..` away before sending: whatever it reaches, never a file outside assets/.
    for (const path of ["/assets/../secret.txt", "/assets/%2e%2e/secret.txt"]) {
      const res = await plainRequest(`${app.url}${path}`, { headers: HTML });
      assert.doesNotMatch(res.body.toString(), /not served/, path);
    }
  });

  it("answers other methods 405 with Allow and a google.rpc.Status body", async () => {
    const res = await plainRequest(`${app.url}/`, { method: "POST" });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, "GET, HEAD");
    assert.equal(JSON.parse(res.body.toString()).code, 12);
  });

  it("takes only browser navigations as the fallback's", () => {
    const { fallback } = createConsoleRoutes({ dir: built });
    const req = (accept?: string) => ({ headers: accept ? { accept } : {} }) as never;
    assert.equal(fallback.accepts(req("text/html,*/*;q=0.8")), true);
    assert.equal(fallback.accepts(req("application/json")), false);
    assert.equal(fallback.accepts(req()), false);
  });

  it("says how to build the console when it was not built: 503 page, assets 404", async () => {
    const page = await plainRequest(`${none.url}/orgs/x`, { headers: HTML });
    assert.equal(page.status, 503);
    assert.match(page.body.toString(), /not built/);
    assert.match(page.body.toString(), /npm run build/);
    assert.equal(page.headers["content-security-policy"], consoleCsp());
    const asset = await plainRequest(`${none.url}/assets/index-abc123.js`);
    assert.equal(asset.status, 404);
  });
});
