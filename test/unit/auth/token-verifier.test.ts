import assert from "node:assert/strict";
import { before, it } from "node:test";
import { Code } from "@connectrpc/connect";
import {
  type CryptoKey,
  decodeProtectedHeader,
  exportSPKI,
  generateKeyPair,
  importJWK,
  SignJWT,
  UnsecuredJWT,
} from "jose";
import { createIssuer, type Issuer } from "../../../src/auth/issuer.js";
import { createSigningKeyRing } from "../../../src/auth/signing-keys.js";
import { createTokenVerifier } from "../../../src/auth/token-verifier.js";
import { ADMIN_IDENTITY_UID } from "../../../src/authz/admin-identity.js";
import { DomainError } from "../../../src/core/errors.js";
import { newRootUid } from "../../../src/core/uidp.js";
import type { Store } from "../../../src/storage/store.js";
import { forEachEngine } from "../../support/databases.js";

const T0 = Date.parse("2026-01-28T12:00:00.000Z");
const API = "http://127.0.0.1:8080";
const REGISTRY = "http://127.0.0.1:5000";

function steppingClock() {
  let t = T0;
  return {
    now: () => t,
    advance: (ms: number) => {
      t += ms;
    },
  };
}

async function rejectsUnauthenticated(promise: Promise<unknown>, message: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof DomainError, String(err));
    assert.equal(err.code, Code.Unauthenticated);
    assert.match(err.message, /^Unauthenticated: /);
    assert.match(err.message, message);
    return true;
  });
}

forEachEngine("token verifier", (db) => {
  let store: Store;
  let clock: ReturnType<typeof steppingClock>;
  let issuer: Issuer;
  const alice = newRootUid();

  before(async () => {
    // The suite's database, so that a second handle (`db.open()`) can play another process.
    store = await db.open();
  });

  function setup() {
    clock = steppingClock();
    issuer = createIssuer({ store, issuerUrl: API, clock });
    return createTokenVerifier({ store, issuerUrl: API, audience: API, clock });
  }

  const mint = (opts: { subject?: string; audience?: string; ttlSeconds?: number } = {}) =>
    issuer.mint({
      subject: opts.subject ?? alice,
      audience: opts.audience ?? API,
      ttlSeconds: opts.ttlSeconds ?? 3600,
    });

  it("round-trips a minted token into a Principal", async () => {
    const verifier = setup();
    const token = await issuer.mint({
      subject: alice,
      audience: [API, REGISTRY],
      ttlSeconds: 600,
      extraClaims: { cap: ["repo.list"] },
    });
    const principal = await verifier.authenticate(token);
    assert.equal(principal.identityUid, alice);
    assert.equal(principal.isAdmin, false);
    assert.equal(principal.claims.iss, API);
    assert.deepEqual(principal.claims.cap, ["repo.list"]);
    assert.equal(principal.claims.exp, T0 / 1000 + 600);
    assert.ok(Object.isFrozen(principal.claims));
  });

  it("recognizes the administrator", async () => {
    const verifier = setup();
    const principal = await verifier.authenticate(await mint({ subject: ADMIN_IDENTITY_UID }));
    assert.equal(principal.isAdmin, true);
    assert.equal(principal.identityUid, ADMIN_IDENTITY_UID);
  });

  it("rejects an expired token, allowing a small clock skew", async () => {
    const verifier = setup();
    const token = await mint({ ttlSeconds: 60 });
    clock.advance(70_000);
    assert.equal((await verifier.authenticate(token)).identityUid, alice, "within the 30 s tolerance");
    clock.advance(30_000);
    await rejectsUnauthenticated(verifier.authenticate(token), /token has expired/);
  });

  it("rejects a token issued in the future (iat), even where exp gets a long tolerance", async () => {
    const verifier = setup();
    const lenient = createTokenVerifier({
      store,
      issuerUrl: API,
      audience: API,
      clock,
      clockToleranceSeconds: 86_400,
    });
    const ahead = (ms: number) =>
      createIssuer({ store, issuerUrl: API, clock: { now: () => clock.now() + ms } });
    const skewed = await ahead(20_000).mint({ subject: alice, audience: API, ttlSeconds: 60 });
    assert.equal((await verifier.authenticate(skewed)).identityUid, alice, "within the 30 s tolerance");
    const future = await ahead(600_000).mint({ subject: alice, audience: API, ttlSeconds: 60 });
    await rejectsUnauthenticated(verifier.authenticate(future), /issued in the future/);
    await rejectsUnauthenticated(lenient.authenticate(future), /issued in the future/);
  });

  it("stops honouring a cached token at its expiry", async () => {
    const verifier = setup();
    const token = await mint({ ttlSeconds: 60 });
    await verifier.authenticate(token);
    clock.advance(60_000 + 31_000);
    await rejectsUnauthenticated(verifier.authenticate(token), /token has expired/);
  });

  it("rejects a token for another audience", async () => {
    const verifier = setup();
    await rejectsUnauthenticated(
      verifier.authenticate(await mint({ audience: REGISTRY })),
      /audience does not include http:\/\/127\.0\.0\.1:8080/,
    );
  });

  it("rejects a token of another issuer even when signed with our key", async () => {
    const verifier = setup();
    const foreign = createIssuer({ store, issuerUrl: "https://evil.example", clock });
    const token = await foreign.mint({ subject: alice, audience: API, ttlSeconds: 60 });
    await rejectsUnauthenticated(verifier.authenticate(token), /issuer is not http:\/\/127\.0\.0\.1:8080/);
  });

  it("rejects a tampered signature or payload", async () => {
    const verifier = setup();
    const token = await mint();
    const [h, p, s] = token.split(".") as [string, string, string];
    const flipped = `${s.slice(0, 10)}${s[10] === "A" ? "B" : "A"}${s.slice(11)}`;
    await rejectsUnauthenticated(verifier.authenticate(`${h}.${p}.${flipped}`), /signature is invalid/);
    const claims = JSON.parse(Buffer.from(p, "base64url").toString()) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: ADMIN_IDENTITY_UID })).toString("base64url");
    await rejectsUnauthenticated(verifier.authenticate(`${h}.${forged}.${s}`), /signature is invalid/);
    assert.equal((await verifier.authenticate(token)).identityUid, alice, "the original still verifies");
  });

  it("never accepts alg none", async () => {
    const verifier = setup();
    const kid = decodeProtectedHeader(await mint()).kid;
    const unsecured = new UnsecuredJWT({ sub: ADMIN_IDENTITY_UID })
      .setIssuer(API)
      .setAudience(API)
      .setIssuedAt(T0 / 1000)
      .setExpirationTime(T0 / 1000 + 60)
      .encode();
    await rejectsUnauthenticated(verifier.authenticate(unsecured), /algorithm is not allowed/);
    // The same with our kid in the header.
    const header = Buffer.from(JSON.stringify({ alg: "none", kid, typ: "JWT" })).toString("base64url");
    const withKid = `${header}.${unsecured.split(".")[1]}.`;
    await rejectsUnauthenticated(verifier.authenticate(withKid), /algorithm is not allowed/);
  });

  it("rejects HS256 tokens whose secret is the public key", async () => {
    const verifier = setup();
    await mint();
    const [jwk] = (await issuer.jwks()).keys;
    assert.ok(jwk?.kid);
    const spki = await exportSPKI((await importJWK(jwk, "ES256", { extractable: true })) as CryptoKey);
    for (const secret of [spki, JSON.stringify(jwk)]) {
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: "HS256", kid: jwk.kid })
        .setIssuer(API)
        .setSubject(ADMIN_IDENTITY_UID)
        .setAudience(API)
        .setIssuedAt(T0 / 1000)
        .setExpirationTime(T0 / 1000 + 60)
        .sign(new TextEncoder().encode(secret));
      await rejectsUnauthenticated(verifier.authenticate(token), /algorithm is not allowed/);
    }
  });

  it("rejects a token signed by a key the issuer does not have", async () => {
    const verifier = setup();
    const { privateKey } = await generateKeyPair("ES256");
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "not-ours" })
      .setIssuer(API)
      .setSubject(alice)
      .setAudience(API)
      .setIssuedAt(T0 / 1000)
      .setExpirationTime(T0 / 1000 + 60)
      .sign(privateKey);
    await rejectsUnauthenticated(verifier.authenticate(token), /key this issuer does not know/);
  });

  it("rejects garbage, empty tokens and non-identity subjects", async () => {
    const verifier = setup();
    await rejectsUnauthenticated(verifier.authenticate(""), /no bearer token/);
    await rejectsUnauthenticated(verifier.authenticate("not.a.jwt"), /malformed/);
    await rejectsUnauthenticated(verifier.authenticate("x".repeat(20_000)), /too large/);
    await rejectsUnauthenticated(
      verifier.authenticate(await mint({ subject: "webhook:abc" })),
      /subject is not an identity/,
    );
  });

  it("verifies tokens signed by a key another process added later", async () => {
    const verifier = setup();
    await verifier.authenticate(await mint());
    // "Another process": its own key ring on the same database, rotated, signing with the new key at once.
    const otherStore = await db.open();
    const otherKeys = createSigningKeyRing({ signingKeys: otherStore.signingKeys, clock });
    const other = createIssuer({ store: otherStore, issuerUrl: API, clock, keys: otherKeys });
    await otherKeys.current();
    clock.advance(1);
    const newKid = await otherKeys.rotate();
    const token = await other.mint({ subject: alice, audience: API, ttlSeconds: 60 });
    assert.equal(decodeProtectedHeader(token).kid, newKid);
    assert.equal((await verifier.authenticate(token)).identityUid, alice);
  });

  it("looks an unknown kid up in the store once, then not again for a second", async () => {
    clock = steppingClock();
    let lists = 0;
    const counting = {
      signingKeys: {
        list: () => {
          lists++;
          return store.signingKeys.list();
        },
        insert: store.signingKeys.insert,
        retireOthers: store.signingKeys.retireOthers,
      },
    };
    const verifier = createTokenVerifier({ store: counting, issuerUrl: API, audience: API, clock });
    const { privateKey } = await generateKeyPair("ES256");
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "made-up" })
      .setIssuer(API)
      .setSubject(alice)
      .setAudience(API)
      .setIssuedAt(T0 / 1000)
      .setExpirationTime(T0 / 1000 + 60)
      .sign(privateKey);
    await rejectsUnauthenticated(verifier.authenticate(forged), /key this issuer does not know/);
    assert.equal(lists, 2, "the initial load, then one re-read for the unknown kid");
    await rejectsUnauthenticated(verifier.authenticate(forged), /key this issuer does not know/);
    assert.equal(lists, 2);
    clock.advance(1000);
    await rejectsUnauthenticated(verifier.authenticate(forged), /key this issuer does not know/);
    assert.equal(lists, 3);
  });

  it("checks a token's signature once and then answers from the cache", async () => {
    const verifier = setup();
    const token = await mint();
    const first = await verifier.authenticate(token);
    assert.deepEqual(verifier.stats(), { verifications: 1, cacheHits: 0, cached: 1 });
    const second = await verifier.authenticate(token);
    assert.equal(second, first, "the cached Principal itself");
    assert.deepEqual(verifier.stats(), { verifications: 1, cacheHits: 1, cached: 1 });

    const other = await mint({ ttlSeconds: 120 });
    await Promise.all([
      verifier.authenticate(other),
      verifier.authenticate(other),
      verifier.authenticate(other),
    ]);
    assert.equal(verifier.stats().verifications, 2, "concurrent requests share one verification");

    const bad = `${token.slice(0, -4)}AAAA`;
    await assert.rejects(verifier.authenticate(bad));
    await assert.rejects(verifier.authenticate(bad));
    assert.equal(verifier.stats().verifications, 4, "failures are never cached");
  });

  it("keeps at most maxCachedTokens tokens", async () => {
    clock = steppingClock();
    issuer = createIssuer({ store, issuerUrl: API, clock });
    const verifier = createTokenVerifier({ issuer, audience: API, clock, maxCachedTokens: 10 });
    for (let i = 0; i < 25; i++) await verifier.authenticate(await mint({ subject: newRootUid() }));
    assert.ok(verifier.stats().cached <= 10, `${verifier.stats().cached} cached`);
    assert.equal(verifier.stats().verifications, 25);
  });
});
