import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, it } from "node:test";
import { createIssuer, type Issuer } from "../../../src/auth/issuer.js";
import { createWellKnownRoutes } from "../../../src/auth/well-known.js";
import { forEachEngine } from "../../support/databases.js";

const ISSUER_URL = "http://wharf.test";

forEachEngine("well-known routes", (db) => {
  let server: Server;
  let base: string;
  let issuer: Issuer;

  before(async () => {
    issuer = createIssuer({
      store: await db.openFresh(),
      issuerUrl: ISSUER_URL,
      clock: { now: () => Date.now() },
    });
    const routes = createWellKnownRoutes(issuer);
    server = createServer((req, res) => {
      const route = routes.find((r) => r.path === req.url?.split("?")[0]);
      if (route) void route.handler(req, res);
      else res.writeHead(404).end();
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    server.closeAllConnections();
    server.close();
    await once(server, "close");
  });

  it("serves the discovery document with cache headers", async () => {
    const res = await fetch(`${base}/.well-known/openid-configuration`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    assert.equal(res.headers.get("cache-control"), "public, max-age=3600");
    const doc = (await res.json()) as Record<string, unknown>;
    assert.equal(doc.issuer, ISSUER_URL);
    assert.equal(doc.jwks_uri, `${ISSUER_URL}/.well-known/jwks.json`);
    assert.deepEqual(doc.id_token_signing_alg_values_supported, ["ES256"]);
  });

  it("serves the public keys, with an ETag for revalidation", async () => {
    await issuer.mint({ subject: "a".repeat(40), audience: ISSUER_URL, ttlSeconds: 60 });
    const res = await fetch(`${base}/.well-known/jwks.json?x=1`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("cache-control"), "public, max-age=300");
    const body = (await res.json()) as { keys: Array<Record<string, unknown>> };
    assert.equal(body.keys.length, 1);
    assert.equal(body.keys[0]?.kty, "EC");
    assert.equal(body.keys[0]?.d, undefined);
    assert.deepEqual(body, await issuer.jwks());

    const etag = res.headers.get("etag");
    assert.ok(etag);
    const again = await fetch(`${base}/.well-known/jwks.json`, { headers: { "if-none-match": etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), "");
  });

  it("answers HEAD without a body and refuses other methods", async () => {
    const head = await fetch(`${base}/.well-known/jwks.json`, { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), "");
    const post = await fetch(`${base}/.well-known/openid-configuration`, { method: "POST", body: "{}" });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get("allow"), "GET, HEAD");
    assert.equal(((await post.json()) as { code: number }).code, 12);
  });
});
