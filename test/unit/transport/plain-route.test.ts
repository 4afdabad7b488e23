import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { invalidArgument, unauthenticated } from "../../../src/core/errors.js";
import { startApiServer } from "../../../src/transport/api-server.js";
import type { ApiServer } from "../../../src/transport/create-api-handler.js";
import { authenticateBearer, plainRoute } from "../../../src/transport/plain-route.js";

const JSON_TYPE = { "content-type": "application/json" };

describe("plainRoute", () => {
  let server: ApiServer;
  let base: string;
  const echo = plainRoute("/echo", ["GET", "POST"], "test.wharf.dev", async ({ params }) => ({
    body: { aud: params.all("aud"), identity: params.get("identity"), missing: params.get("missing") },
  }));
  const failing = plainRoute("/fail", ["GET"], "test.wharf.dev", async ({ params }) => {
    if (params.get("kind") === "domain") throw invalidArgument("identity", "is required");
    throw new Error("secret detail");
  });
  const redirecting = plainRoute("/go", ["GET"], "test.wharf.dev", async () => ({
    redirect: "http://127.0.0.1:1/callback?code=x",
  }));
  const whoami = plainRoute("/me", ["GET"], "test.wharf.dev", async ({ req }) => {
    const principal = await authenticateBearer(req, {
      authenticate: async (token) => {
        if (token !== "good") throw unauthenticated("token is not valid");
        return { identityUid: "me", isAdmin: false, claims: {} };
      },
    });
    return { body: { uid: principal.identityUid } };
  });
  const routes = new Map([echo, failing, redirecting, whoami].map((r) => [r.path, r.handler]));

  before(async () => {
    server = await startApiServer({
      host: "127.0.0.1",
      port: 0,
      handler: (req, res) => {
        const path = (req.url ?? "/").split("?")[0] ?? "/";
        const route = routes.get(path);
        if (!route) {
          res.statusCode = 404;
          res.end();
          return;
        }
        Promise.resolve(route(req, res)).catch(() => {});
      },
    });
    base = `http://127.0.0.1:${server.address.port}`;
  });
  after(() => server.close({ graceMs: 100 }));

  it("merges query, form and JSON parameters and splits comma lists", async () => {
    const get = await fetch(`${base}/echo?aud=a,b&aud=c&identity=x`);
    assert.equal(get.status, 200, "GET answers 200");
    assert.equal(get.headers.get("cache-control"), "no-store", "token answers are never cached");
    assert.deepEqual(await get.json(), { aud: ["a", "b", "c"], identity: "x", missing: "" });

    const form = await fetch(`${base}/echo?aud=q`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "aud=f1,f2&identity=y",
    });
    assert.deepEqual(await form.json(), { aud: ["q", "f1", "f2"], identity: "y", missing: "" });

    const json = await fetch(`${base}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ aud: ["j1", "j2"], identity: "z" }),
    });
    assert.deepEqual(await json.json(), { aud: ["j1", "j2"], identity: "z", missing: "" });
  });

  it("answers bad bodies, other methods and failures as google.rpc.Status JSON", async () => {
    const badJson = await fetch(`${base}/echo`, { method: "POST", headers: JSON_TYPE, body: "{nope" });
    assert.equal(badJson.status, 400, "malformed JSON is a 400");
    const status = (await badJson.json()) as { code: number; message: string };
    assert.equal(status.code, 3, "INVALID_ARGUMENT");
    assert.match(status.message, /body: is not valid JSON/);

    const nested = await fetch(`${base}/echo`, {
      method: "POST",
      headers: JSON_TYPE,
      body: '{"aud":{"x":1}}',
    });
    assert.equal(nested.status, 400, "an object value is refused");

    const xml = await fetch(`${base}/echo`, {
      method: "POST",
      headers: { "content-type": "application/xml" },
      body: "<a/>",
    });
    assert.equal(xml.status, 400, "an unsupported content type is refused");

    const big = await fetch(`${base}/echo`, { method: "POST", body: "x".repeat(70 * 1024) });
    assert.equal(big.status, 413, "an oversized body is refused");

    const put = await fetch(`${base}/echo`, { method: "PUT" });
    assert.equal(put.status, 405, "other methods get 405");

    const domain = await fetch(`${base}/fail?kind=domain`);
    assert.equal(domain.status, 400, "a domain error keeps its status");
    const detail = (await domain.json()) as { details: { domain?: string }[] };
    assert.ok(
      detail.details.some((d) => d.domain === "test.wharf.dev"),
      "ErrorInfo carries the route's domain",
    );

    const crash = await fetch(`${base}/fail`);
    assert.equal(crash.status, 500, "an unexpected error is a 500");
    assert.doesNotMatch(await crash.text(), /secret detail/, "its message is never sent");
  });

  it("redirects, and authenticates bearer tokens", async () => {
    const go = await fetch(`${base}/go`, { redirect: "manual" });
    assert.equal(go.status, 302, "a redirect result is a 302");
    assert.equal(go.headers.get("location"), "http://127.0.0.1:1/callback?code=x");

    assert.equal((await fetch(`${base}/me`)).status, 401, "no token → 401");
    const bad = await fetch(`${base}/me`, { headers: { authorization: "Bearer bad" } });
    assert.equal(bad.status, 401, "a bad token → 401");
    const good = await fetch(`${base}/me`, { headers: { authorization: "Bearer good" } });
    assert.deepEqual(await good.json(), { uid: "me" });
  });
});
