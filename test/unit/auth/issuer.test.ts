import assert from "node:assert/strict";
import { it } from "node:test";
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader } from "jose";
import { createIssuer } from "../../../src/auth/issuer.js";
import { createSigningKeyRing } from "../../../src/auth/signing-keys.js";
import {
  MAX_CLOCK_TOLERANCE_SECONDS,
  MAX_TOKEN_TTL_SECONDS,
  TOKEN_ACCEPTANCE_HORIZON_MS,
} from "../../../src/auth/token-limits.js";
import { createTokenVerifier } from "../../../src/auth/token-verifier.js";
import { newRootUid } from "../../../src/core/uidp.js";
import { forEachEngine } from "../../support/databases.js";

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
    await assert.rejects(issuer.mint({ ...base, ttlSeconds: MAX_TOKEN_TTL_SECONDS + 1 }), /1 to 86400/);
    assert.ok(await issuer.mint({ ...base, ttlSeconds: MAX_TOKEN_TTL_SECONDS }), "24 h is the most");
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
    clock.advance(2000); // past the key cache: both re-read the store
    const [ka, kb] = [decodeProtectedHeader(await mint(a)).kid, decodeProtectedHeader(await mint(b)).kid];
    assert.equal(ka, kb);
  });

  it("a rotated key signs at once; the old key verifies until every token it signed is past acceptance", async () => {
    const store = await db.openFresh();
    const clock = steppingClock();
    const keys = createSigningKeyRing({ signingKeys: store.signingKeys, clock });
    const issuer = createIssuer({ store, issuerUrl: ISSUER_URL, clock, keys });
    // The most lenient verifier there is (the registry's upload sessions): the longest acceptance.
    const lenient = createTokenVerifier({
      keys,
      issuerUrl: ISSUER_URL,
      audience: "a",
      clock,
      clockToleranceSeconds: MAX_CLOCK_TOLERANCE_SECONDS,
    });
    const mint = (ttlSeconds = 60) => issuer.mint({ subject: newRootUid(), audience: "a", ttlSeconds });
    const oldToken = await mint(MAX_TOKEN_TTL_SECONDS);
    const oldKid = decodeProtectedHeader(oldToken).kid;
    clock.advance(1000);
    const rotatedAt = clock.now();
    const newKid = await keys.rotate();
    assert.notEqual(newKid, oldKid);
    assert.equal(decodeProtectedHeader(await mint()).kid, newKid, "signs with the new key at once");
    assert.deepEqual(
      (await issuer.jwks()).keys.map((k) => k.kid),
      [newKid, oldKid],
    );
    assert.deepEqual(
      (await keys.describe()).map((k) => [k.kid, k.state, k.retireTime]),
      [
        [newKid, "current", undefined],
        [oldKid, "retiring", rotatedAt + TOKEN_ACCEPTANCE_HORIZON_MS],
      ],
    );
    assert.equal(TOKEN_ACCEPTANCE_HORIZON_MS, 48 * 3600_000, "24 h lifetime + 24 h upload-session tolerance");

    // The old token is accepted until iat + horizon; its key retires at rotation + horizon.
    clock.advance(TOKEN_ACCEPTANCE_HORIZON_MS - 2000);
    assert.ok((await lenient.authenticate(oldToken)).identityUid, "still accepted, within tolerance");
    clock.advance(1999);
    assert.ok(await keys.verificationKey(oldKid ?? ""), "verifies until its retire time");
    clock.advance(1);
    assert.equal(await keys.verificationKey(oldKid ?? ""), undefined, "retired");
    const uncached = createTokenVerifier({
      keys,
      issuerUrl: ISSUER_URL,
      audience: "a",
      clock,
      clockToleranceSeconds: MAX_CLOCK_TOLERANCE_SECONDS,
    });
    await assert.rejects(uncached.authenticate(oldToken), /key this issuer does not know/);
    assert.deepEqual(
      (await issuer.jwks()).keys.map((k) => k.kid),
      [newKid],
      "no longer published",
    );
    assert.deepEqual(
      (await keys.describe()).map((k) => [k.kid, k.state]),
      [
        [newKid, "current"],
        [oldKid, "retired"],
      ],
    );
  });

  it("another process's ring signs with a rotated key within its cache time", async () => {
    const store = await db.openFresh();
    const clock = steppingClock();
    const here = createIssuer({ store, issuerUrl: ISSUER_URL, clock });
    const elsewhere = createSigningKeyRing({ signingKeys: store.signingKeys, clock });
    const kidOf = async () =>
      decodeProtectedHeader(await here.mint({ subject: newRootUid(), audience: "a", ttlSeconds: 60 })).kid;
    const oldKid = await kidOf();
    clock.advance(10);
    const newKid = await elsewhere.rotate();
    assert.equal(await kidOf(), oldKid, "within the 2 s key cache");
    clock.advance(2000);
    assert.equal(await kidOf(), newKid);
    assert.ok((await here.jwks()).keys.some((k) => k.kid === newKid));
  });

  it("racing rotations leave exactly the newest key current", async () => {
    const options = await db.freshOptions();
    const store = await db.open(options);
    const clock = steppingClock();
    const a = createSigningKeyRing({ signingKeys: store.signingKeys, clock });
    const b = createSigningKeyRing({ signingKeys: (await db.open(options)).signingKeys, clock });
    await a.current();
    clock.advance(10);
    await Promise.all([a.rotate(), b.rotate()]);
    const states = (await a.describe()).map((k) => k.state);
    assert.deepEqual(states, ["current", "retiring", "retiring"]);
    const unmarked = (await store.signingKeys.list()).filter((k) => k.retireTime === undefined);
    assert.equal(unmarked.length, 1, "only the signer has no retire time");
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
