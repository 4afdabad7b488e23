import assert from "node:assert/strict";
import { it } from "node:test";
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader } from "jose";
import { forEachEngine } from "../../test/support/databases.js";
import { newRootUid } from "../core/uidp.js";
import { createIssuer } from "./issuer.js";
import { createSigningKeyRing } from "./signing-keys.js";

const T0 = Date.parse("2026-01-28T12:00:00.000Z");
const ISSUER_URL = "http://127.0.0.1:8080";

function steppingClock() {
  let t = T0;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

forEachEngine("issuer", (db) => {
  it("mints ES256 JWTs with the registered claims, extras and the signing key's thumbprint as kid", async () => {
    const store = await db.openFresh();
    const issuer = createIssuer({ store, issuerUrl: `${ISSUER_URL}/`, clock: steppingClock() });
    const sub = newRootUid();
    const act = { iss: "https://token.actions.githubusercontent.com", sub: "repo:acme/app", aud: "wharf" };
    const token = await issuer.mint({
      subject: sub,
      audience: ISSUER_URL,
      ttlSeconds: 3600,
      extraClaims: { act },
    });

    const header = decodeProtectedHeader(token);
    assert.equal(header.alg, "ES256");
    assert.equal(header.typ, "JWT");
    const claims = decodeJwt(token);
    assert.equal(claims.iss, ISSUER_URL, "trailing slash dropped");
    assert.equal(claims.sub, sub);
    assert.equal(claims.aud, ISSUER_URL);
    assert.equal(claims.iat, T0 / 1000);
    assert.equal(claims.exp, T0 / 1000 + 3600);
    assert.match(String(claims.jti), /^[0-9a-f-]{36}$/);
    assert.deepEqual(claims.act, act);

    const [key, ...others] = (await issuer.jwks()).keys;
    assert.equal(others.length, 0);
    assert.ok(key);
    assert.equal(header.kid, key.kid);
    assert.equal(key.kid, await calculateJwkThumbprint({ kty: key.kty, crv: key.crv, x: key.x, y: key.y }));
    assert.equal(key.alg, "ES256");
    assert.equal(key.use, "sig");
    assert.equal(key.d, undefined, "no private material is published");
  });

  it("refuses bad ttls and registered claims among the extras", async () => {
    const issuer = createIssuer({
      store: await db.openFresh(),
      issuerUrl: ISSUER_URL,
      clock: steppingClock(),
    });
    const base = { subject: newRootUid(), audience: ISSUER_URL };
    await assert.rejects(issuer.mint({ ...base, ttlSeconds: 0 }), TypeError);
    await assert.rejects(issuer.mint({ ...base, ttlSeconds: 1.5 }), TypeError);
    await assert.rejects(issuer.mint({ ...base, ttlSeconds: 60, extraClaims: { exp: 1 } }), /"exp"/);
  });

  it("keeps using the stored key across restarts", async () => {
    const store = await db.openFresh();
    const first = createIssuer({ store, issuerUrl: ISSUER_URL, clock: steppingClock() });
    const kid1 = decodeProtectedHeader(
      await first.mint({ subject: newRootUid(), audience: "a", ttlSeconds: 60 }),
    ).kid;
    const restarted = createIssuer({ store, issuerUrl: ISSUER_URL, clock: steppingClock() });
    const kid2 = decodeProtectedHeader(
      await restarted.mint({ subject: newRootUid(), audience: "a", ttlSeconds: 60 }),
    ).kid;
    assert.equal(kid2, kid1);
    assert.equal((await store.signingKeys.list()).length, 1);
  });

  it("processes racing to create the first key converge on one signer", async () => {
    // Two handles on the suite's database (no other test of this suite uses it): two processes.
    const store = await db.open();
    const other = await db.open();
    const clock = steppingClock();
    const a = createIssuer({ store, issuerUrl: ISSUER_URL, clock });
    const b = createIssuer({ store: other, issuerUrl: ISSUER_URL, clock });
    const mint = (issuer: typeof a) => issuer.mint({ subject: newRootUid(), audience: "a", ttlSeconds: 60 });
    const [ta, tb] = await Promise.all([mint(a), mint(b)]);
    const stored = await store.signingKeys.list();
    assert.ok(stored.length >= 1 && stored.length <= 2, `${stored.length} keys`);
    const fresh = createIssuer({ store, issuerUrl: ISSUER_URL, clock });
    const published = new Set((await fresh.jwks()).keys.map((k) => k.kid));
    assert.ok(published.has(decodeProtectedHeader(ta).kid ?? ""));
    assert.ok(published.has(decodeProtectedHeader(tb).kid ?? ""));
    clock.advance(61_000); // past the key cache: both re-read the store
    const [ka, kb] = [decodeProtectedHeader(await mint(a)).kid, decodeProtectedHeader(await mint(b)).kid];
    assert.equal(ka, kb);
  });

  it("publishes a rotated key at once and signs with it after the activation delay", async () => {
    const store = await db.openFresh();
    const clock = steppingClock();
    const keys = createSigningKeyRing({ signingKeys: store.signingKeys, clock, activationDelayMs: 600_000 });
    const issuer = createIssuer({ store, issuerUrl: ISSUER_URL, clock, keys });
    const mintKid = async () =>
      decodeProtectedHeader(await issuer.mint({ subject: newRootUid(), audience: "a", ttlSeconds: 60 })).kid;
    const oldKid = await mintKid();
    clock.advance(1000);
    const newKid = await keys.rotate();
    assert.notEqual(newKid, oldKid);
    assert.deepEqual(
      (await issuer.jwks()).keys.map((k) => k.kid),
      [newKid, oldKid],
    );
    assert.equal(await mintKid(), oldKid, "not yet activated");
    clock.advance(600_000);
    assert.equal(await mintKid(), newKid);
  });

  it("serves OpenID discovery metadata", async () => {
    const issuer = createIssuer({
      store: await db.openFresh(),
      issuerUrl: ISSUER_URL,
      clock: steppingClock(),
    });
    const doc = issuer.discovery();
    assert.equal(doc.issuer, ISSUER_URL);
    assert.equal(doc.jwks_uri, `${ISSUER_URL}/.well-known/jwks.json`);
    assert.deepEqual(doc.id_token_signing_alg_values_supported, ["ES256"]);
    assert.ok(doc.response_types_supported.length > 0);
    assert.ok(doc.subject_types_supported.includes("public"));
  });
});
