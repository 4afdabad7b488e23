import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { after, before, describe, it } from "node:test";
import { gunzipSync } from "node:zlib";
import { DOCS_CSP } from "../../src/transport/api-reference-routes.js";
import { expectJson } from "../support/api-assertions.js";
import { createDocValidator, loadOpenApiDocument } from "../support/openapi-validator.js";
import { plainRequest } from "../support/plain-http.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const doc = loadOpenApiDocument();
const validate = createDocValidator(doc);

/**
 * Asserts that a real answer matches the document: the 200 schema of `method docPath`, or its
 * `default` (google.rpc.Status) for an error; and that `requestBody`, when given, matches its body.
 */
function assertDescribed(
  method: string,
  docPath: string,
  status: number,
  body: unknown,
  requestBody?: unknown,
) {
  const op = doc.paths[docPath]?.[method];
  assert.ok(op, `${method} ${docPath} is in the document`);
  const response = op.responses[status === 200 ? "200" : "default"]!;
  const problems = validate(response.content["application/json"].schema, body);
  assert.equal(problems, "", `${method} ${docPath} ${status}: ${JSON.stringify(body)}`);
  if (requestBody !== undefined) {
    const schema = op.requestBody?.content["application/json"].schema;
    assert.equal(validate(schema, requestBody), "", `${method} ${docPath} request body`);
  }
}

describe("the API reference: /openapi.json and /docs", () => {
  let wharf: TestServer;
  before(async () => {
    wharf = await startTestServer();
  });
  after(() => wharf.close());

  it("serves the generated document without a token, with an ETag", async () => {
    const res = await fetch(`${wharf.apiUrl}/openapi.json`);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.deepEqual(await expectJson(res), doc);
    const etag = res.headers.get("etag");
    assert.ok(etag);
    const again = await fetch(`${wharf.apiUrl}/openapi.json`, { headers: { "if-none-match": etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), "");
    const head = await fetch(`${wharf.apiUrl}/openapi.json`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");
  });

  it("gzips for clients that accept it, with an ETag per encoding", async () => {
    const bundle = `${wharf.apiUrl}/docs/redoc.standalone.js`;
    const plain = await plainRequest(bundle);
    assert.equal(plain.headers["content-encoding"], undefined);
    assert.equal(plain.headers["content-length"], String(plain.body.length));
    const zipped = await plainRequest(bundle, { headers: { "accept-encoding": "br, gzip;q=0.8" } });
    assert.equal(zipped.headers["content-encoding"], "gzip");
    assert.equal(zipped.headers.vary, "accept-encoding");
    assert.ok(zipped.body.length < plain.body.length / 2, "smaller");
    assert.ok(gunzipSync(zipped.body).equals(plain.body), "the same bytes once unzipped");
    assert.notEqual(zipped.headers.etag, plain.headers.etag);
    const refused = await plainRequest(bundle, { headers: { "accept-encoding": "gzip;q=0" } });
    assert.equal(refused.headers["content-encoding"], undefined);
    const stale = await plainRequest(bundle, { headers: { "if-none-match": String(zipped.headers.etag) } });
    assert.equal(stale.status, 200, "the gzip ETag does not match the identity answer");
  });

  it("answers other methods 405 with a google.rpc.Status", async () => {
    const res = await fetch(`${wharf.apiUrl}/openapi.json`, { method: "POST", body: "{}" });
    const body = await expectJson<{ code: number }>(res, 405);
    assert.equal(body.code, 12);
    assert.equal(res.headers.get("allow"), "GET, HEAD");
  });

  it("serves /docs without a token: Redoc from this server only, under a self-only CSP", async () => {
    const res = await fetch(`${wharf.apiUrl}/docs`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/html; charset=utf-8");
    const csp = res.headers.get("content-security-policy") ?? "";
    assert.equal(csp, DOCS_CSP);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /https?:|\*/, "no other origin is allowed");
    const html = await res.text();
    // Every URL the page references (src, href, spec-url) is on this server; the icon is empty
    // (data:), so the browser asks for no /favicon.ico.
    const urls = [...html.matchAll(/\b(?:src|href|spec-url)="([^"]*)"/g)].map((m) => m[1]!);
    assert.deepEqual(urls.sort(), ["data:,", "docs/redoc.standalone.js", "openapi.json"]);
    urls.splice(urls.indexOf("data:,"), 1);
    assert.doesNotMatch(html, /https?:\/\/|\/\//, "no external URL anywhere in the page");
    assert.doesNotMatch(html, /<script>/, "no inline script");
    const resolved = urls.map((u) => new URL(u, `${wharf.apiUrl}/docs`).pathname).sort();
    assert.deepEqual(resolved, ["/docs/redoc.standalone.js", "/openapi.json"]);
  });

  it("serves the installed Redoc bundle the page loads, without its CDN logo URL", async () => {
    const res = await fetch(`${wharf.apiUrl}/docs/redoc.standalone.js`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/javascript; charset=utf-8");
    const installed = readFileSync(
      createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js"),
      "utf8",
    );
    const served = await res.text();
    assert.ok(installed.includes("https://cdn.redoc.ly/"), "the installed bundle names the CDN");
    assert.ok(!served.includes("https://cdn.redoc.ly/"), "the served one does not");
    // Byte for byte the installed bundle otherwise: only the logo's src is a local (empty) image.
    const logo = /src:"(data:image\/svg\+xml,[^"]*)"/.exec(served)?.[1];
    assert.ok(logo, "the logo is a data: image");
    assert.equal(served, installed.replaceAll("https://cdn.redoc.ly/redoc/logo-mini.svg", logo));
  });

  it("describes real answers of the running server, successes and errors", async () => {
    const ping = await fetch(`${wharf.apiUrl}/ping/v2/ping`);
    assertDescribed("get", "/ping/v2/ping", 200, await expectJson(ping));

    const orgBody = { name: "acme", description: "the acme org" };
    const org = await expectJson<{ uid: string }>(
      await wharf.api("/iam/v2/groups", { method: "POST", token: wharf.adminToken, body: orgBody }),
    );
    assertDescribed("post", "/iam/v2/groups", 200, org, orgBody);
    const got = await expectJson(await wharf.api(`/iam/v2/groups/${org.uid}`, { token: wharf.adminToken }));
    assertDescribed("get", "/iam/v2/groups/{uid}", 200, got);
    const list = await expectJson(await wharf.api("/iam/v2/groups?page_size=5", { token: wharf.adminToken }));
    assertDescribed("get", "/iam/v2/groups", 200, list);

    const repoBody = { name: "alpine", description: "alpine image" };
    const repo = await expectJson<{ uid: string }>(
      await wharf.api(`/registry/v2/repos/${org.uid}`, {
        method: "POST",
        token: wharf.adminToken,
        body: repoBody,
      }),
    );
    assertDescribed("post", "/registry/v2/repos/{uid}", 200, repo, repoBody);
    const repos = await expectJson(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${org.uid}`, { token: wharf.adminToken }),
    );
    assertDescribed("get", "/registry/v2/repos", 200, repos);

    const absent = `${org.uid.slice(0, -1)}${org.uid.endsWith("0") ? "1" : "0"}`;
    const missing = await wharf.api(`/iam/v2/groups/${absent}`, { token: wharf.adminToken });
    assertDescribed("get", "/iam/v2/groups/{uid}", 404, await expectJson(missing, 404));
    const bad = await wharf.api("/iam/v2/groups?page_size=x", { token: wharf.adminToken });
    assertDescribed("get", "/iam/v2/groups", 400, await expectJson(bad, 400));
    const anonymous = await wharf.api("/iam/v2/groups");
    assertDescribed("get", "/iam/v2/groups", 401, await expectJson(anonymous, 401));
  });
});
