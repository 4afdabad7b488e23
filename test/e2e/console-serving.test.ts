import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { consoleCsp } from "../../src/transport/console-routes.js";
import { plainRequest } from "../support/plain-http.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const BROWSER = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };

describe("wharf serve serves the built console at / (API paths first)", () => {
  let wharf: TestServer;

  before(async () => {
    wharf = await startTestServer();
  });
  after(() => wharf.close());

  it("answers / with the console's index.html, whose bundle is served from /assets/", async () => {
    const page = await plainRequest(`${wharf.apiUrl}/`, { headers: BROWSER });
    assert.equal(page.status, 200);
    assert.equal(page.headers["content-security-policy"], consoleCsp([new URL(wharf.registryUrl).origin]));
    assert.match(
      String(page.headers["content-security-policy"]),
      /connect-src 'self' http:\/\/127\.0\.0\.1:\d+;/,
    );
    const html = page.body.toString();
    assert.match(html, /<div id="root"><\/div>/);
    const scripts = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    assert.ok(scripts.some((s) => s.endsWith(".js")) && scripts.some((s) => s.endsWith(".css")), html);
    assert.doesNotMatch(html, /<script>(?!<\/script>)|https?:\/\//, "no inline script, nothing remote");
    for (const asset of scripts) {
      const res = await plainRequest(`${wharf.apiUrl}${asset}`);
      assert.equal(res.status, 200, asset);
      assert.match(String(res.headers["cache-control"]), /immutable/, asset);
    }
  });

  it("falls back to the app for unknown paths a browser navigates to", async () => {
    for (const path of ["/orgs", "/repos/0123/tags/latest", "/advisories?q=x"]) {
      const page = await plainRequest(`${wharf.apiUrl}${path}`, { headers: BROWSER });
      assert.equal(page.status, 200, path);
      assert.match(page.body.toString(), /<div id="root">/, path);
    }
  });

  it("keeps API answers for API paths, whatever the Accept header", async () => {
    const groups = await plainRequest(`${wharf.apiUrl}/iam/v2/groups`, { headers: BROWSER });
    assert.equal(groups.status, 401, "an RPC route still authenticates");
    assert.equal(JSON.parse(groups.body.toString()).code, 16);
    const config = await plainRequest(`${wharf.apiUrl}/auth/v1/config`, { headers: BROWSER });
    assert.equal(config.status, 200);
    assert.ok(JSON.parse(config.body.toString()).issuer, "a plain route still answers JSON");
    const docs = await plainRequest(`${wharf.apiUrl}/docs`, { headers: BROWSER });
    assert.match(docs.body.toString(), /<redoc /, "/docs stays the API reference");
    const postOnly = await plainRequest(`${wharf.apiUrl}/auth/v1/register`, { headers: BROWSER });
    assert.notEqual(postOnly.status, 200, "a path another method answers is not the console's");
  });

  it("answers non-browser requests to unknown paths with the REST 404 as before", async () => {
    const res = await plainRequest(`${wharf.apiUrl}/orgs`, { headers: { accept: "application/json" } });
    assert.equal(res.status, 404);
    assert.equal(JSON.parse(res.body.toString()).code, 5);
    const post = await plainRequest(`${wharf.apiUrl}/orgs`, { method: "POST", headers: BROWSER });
    assert.equal(post.status, 404, "only GET and HEAD fall back");
  });

  it("lets the console (the API's origin) read the registry cross-origin, and nothing else", async () => {
    const origin = new URL(wharf.apiUrl).origin;
    const preflight = (from: string, method: string) =>
      plainRequest(`${wharf.registryUrl}/v2/acme/app/_service/history/latest`, {
        method: "OPTIONS",
        headers: {
          origin: from,
          "access-control-request-method": method,
          "access-control-request-headers": "authorization",
        },
      });
    const ok = await preflight(origin, "GET");
    assert.equal(ok.status, 204);
    assert.equal(ok.headers["access-control-allow-origin"], origin);
    assert.match(String(ok.headers["access-control-allow-headers"]), /authorization/);
    for (const [from, method] of [
      ["https://evil.example", "GET"],
      [origin, "PUT"],
      [origin, "DELETE"],
    ] as const) {
      const refused = await preflight(from, method);
      assert.equal(refused.headers["access-control-allow-origin"], undefined, `${from} ${method}`);
    }
    const read = await plainRequest(`${wharf.registryUrl}/v2/`, { headers: { origin } });
    assert.equal(read.status, 401, "CORS grants no access: the token still decides");
    assert.equal(read.headers["access-control-allow-origin"], origin);
    assert.match(String(read.headers["access-control-expose-headers"]), /www-authenticate/);
    const other = await plainRequest(`${wharf.registryUrl}/v2/`, {
      headers: { origin: "https://evil.example" },
    });
    assert.equal(other.headers["access-control-allow-origin"], undefined);
  });
});
