import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { exportJWK, generateKeyPair, importJWK, SignJWT } from "jose";
import type { Clock } from "../../../src/core/clock.js";
import {
  createExternalTokenVerifier,
  ExternalTokenError,
} from "../../../src/oidc/external-token-verifier.js";
import { type OidcPeer, startOidcPeer } from "../../support/oidc-peer.js";

const AUD = "https://wharf.example";

/** A clock tests can move; starts at the wall clock. */
function movableClock(): Clock & { advance(ms: number): void } {
  let offset = 0;
  return { now: () => Date.now() + offset, advance: (ms) => (offset += ms) };
}

async function refused(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ExternalTokenError, `an ExternalTokenError, got ${String(err)}`);
    assert.match(err.message, pattern);
    return true;
  });
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

/** A tiny HTTP server answering every request with `handler`'s JSON (or hanging when it returns undefined). */
async function jsonServer(
  handler: (url: string, base: string) => unknown,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const body = handler(req.url ?? "/", url);
    if (body === undefined) return; // never answers
    res.setHeader("content-type", "application/json");
    res.end(typeof body === "string" ? body : JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, server };
}

describe("external token verifier (against a real oidc-provider)", () => {
  let peer: OidcPeer;
  let other: OidcPeer;
  before(async () => {
    peer = await startOidcPeer();
    other = await startOidcPeer();
  });
  after(async () => {
    await peer.close();
    await other.close();
  });

  it("verifies a real JWT access token; discovery and keys are fetched once and cached", async () => {
    const verifier = createExternalTokenVerifier({ clock: movableClock() });
    const token = await peer.clientCredentialsToken({ audience: AUD });
    const discoveryBefore = peer.requests("/.well-known/openid-configuration");
    const jwksBefore = peer.requests("/jwks");
    const first = await verifier.verify(token, { issuer: peer.issuer, audience: AUD });
    assert.equal(first.claims.iss, peer.issuer);
    assert.equal(first.claims.sub, "ci");
    assert.deepEqual(first.audience, [AUD]);
    assert.equal(first.claims.repository, "acme/app", "the client's extra claims are there");
    await verifier.verify(token, { issuer: peer.issuer, audience: (aud) => aud.startsWith("https://wharf") });
    assert.equal(
      peer.requests("/.well-known/openid-configuration") - discoveryBefore,
      1,
      "one discovery fetch",
    );
    assert.equal(peer.requests("/jwks") - jwksBefore, 1, "one key-set fetch");
  });

  it("refuses an expired token (with 30 s tolerance)", async () => {
    const clock = movableClock();
    const verifier = createExternalTokenVerifier({ clock });
    const token = await peer.clientCredentialsToken({ audience: AUD });
    clock.advance(3600_000 + 20_000);
    await verifier.verify(token, { issuer: peer.issuer, audience: AUD });
    clock.advance(15_000);
    await refused(verifier.verify(token, { issuer: peer.issuer, audience: AUD }), /token has expired/);
  });

  it("refuses a token for another audience", async () => {
    const verifier = createExternalTokenVerifier({ clock: movableClock() });
    const token = await peer.clientCredentialsToken({ audience: "https://elsewhere.example" });
    await refused(
      verifier.verify(token, { issuer: peer.issuer, audience: AUD }),
      /audience does not include https:\/\/wharf\.example/,
    );
  });

  it("refuses a token of another issuer verified as this issuer's", async () => {
    const verifier = createExternalTokenVerifier({ clock: movableClock() });
    const token = await other.clientCredentialsToken({ audience: AUD });
    await refused(
      verifier.verify(token, { issuer: peer.issuer, audience: AUD }),
      /does not publish|issuer is not/,
    );
  });

  it("refuses a subject other than the expected one", async () => {
    const verifier = createExternalTokenVerifier({ clock: movableClock() });
    const token = await peer.clientCredentialsToken({ audience: AUD });
    await refused(
      verifier.verify(token, { issuer: peer.issuer, audience: AUD, subject: "someone-else" }),
      /subject does not match/,
    );
  });

  it("an unknown kid refetches the key set (after the cooldown) and is still refused", async () => {
    const verifier = createExternalTokenVerifier({ clock: movableClock(), jwksCooldownMs: 0 });
    await verifier.verify(await peer.clientCredentialsToken({ audience: AUD }), {
      issuer: peer.issuer,
      audience: AUD,
    });
    const { privateKey } = await generateKeyPair("ES256");
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "not-a-key-of-the-peer" })
      .setIssuer(peer.issuer)
      .setSubject("ci")
      .setAudience(AUD)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(privateKey);
    const jwksBefore = peer.requests("/jwks");
    await refused(verifier.verify(forged, { issuer: peer.issuer, audience: AUD }), /does not publish/);
    assert.equal(peer.requests("/jwks") - jwksBefore, 1, "the key set was fetched again once");
  });

  it("a forged token reusing the peer's kid fails the signature check", async () => {
    const verifier = createExternalTokenVerifier({ clock: movableClock() });
    const { privateKey } = await generateKeyPair("ES256");
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: peer.currentKey().kid })
      .setIssuer(peer.issuer)
      .setSubject("ci")
      .setAudience(AUD)
      .setExpirationTime(now + 600)
      .sign(privateKey);
    await refused(verifier.verify(forged, { issuer: peer.issuer, audience: AUD }), /signature is invalid/);
  });

  it("after the issuer rotates its key, a token with the new kid verifies (key set refetched)", async () => {
    const rotating = await startOidcPeer();
    try {
      const verifier = createExternalTokenVerifier({ clock: movableClock(), jwksCooldownMs: 0 });
      await verifier.verify(await rotating.clientCredentialsToken({ audience: AUD }), {
        issuer: rotating.issuer,
        audience: AUD,
      });
      await rotating.rotateKeys();
      const fresh = await rotating.clientCredentialsToken({ audience: AUD });
      const verified = await verifier.verify(fresh, { issuer: rotating.issuer, audience: AUD });
      assert.equal(verified.header.kid, rotating.currentKey().kid);
    } finally {
      await rotating.close();
    }
  });

  it('refuses alg "none" before any network request', async () => {
    const verifier = createExternalTokenVerifier({ clock: movableClock() });
    const now = Math.floor(Date.now() / 1000);
    const unsigned = `${b64({ alg: "none", typ: "JWT" })}.${b64({ iss: peer.issuer, sub: "ci", aud: AUD, exp: now + 600 })}.`;
    const before = peer.requests("/.well-known/openid-configuration");
    await refused(
      verifier.verify(unsigned, { issuer: peer.issuer, audience: AUD }),
      /algorithm "none" is not allowed/,
    );
    assert.equal(peer.requests("/.well-known/openid-configuration"), before, "nothing fetched");
  });

  it("refuses HS256 'signed' with the issuer's public key", async () => {
    const verifier = createExternalTokenVerifier({ clock: movableClock() });
    const jwks = (await (await fetch(`${peer.issuer}/jwks`)).json()) as { keys: Record<string, unknown>[] };
    const publicJwk = jwks.keys[0] ?? {};
    const now = Math.floor(Date.now() / 1000);
    const signingInput = `${b64({ alg: "HS256", kid: publicJwk.kid })}.${b64({ iss: peer.issuer, sub: "ci", aud: AUD, exp: now + 600 })}`;
    for (const secret of [JSON.stringify(publicJwk), String(publicJwk.x)]) {
      const mac = createHmac("sha256", secret).update(signingInput).digest("base64url");
      await refused(
        verifier.verify(`${signingInput}.${mac}`, { issuer: peer.issuer, audience: AUD }),
        /algorithm "HS256" is not allowed/,
      );
    }
  });

  it("refuses malformed tokens and tokens without exp, or not yet valid", async () => {
    const clock = movableClock();
    const verifier = createExternalTokenVerifier({ clock });
    await refused(verifier.verify("not-a-jwt", { issuer: peer.issuer, audience: AUD }), /malformed/);
    const now = Math.floor(Date.now() / 1000);
    const head = b64({ alg: "ES256" });
    const noExp = `${head}.${b64({ iss: peer.issuer, sub: "ci", aud: AUD })}.sig`;
    await refused(verifier.verify(noExp, { issuer: peer.issuer, audience: AUD }), /no "exp" claim/);
    const future = `${head}.${b64({ iss: peer.issuer, sub: "ci", aud: AUD, exp: now + 900, nbf: now + 120 })}.sig`;
    await refused(verifier.verify(future, { issuer: peer.issuer, audience: AUD }), /not yet valid/);
  });

  it("needs https issuers except on loopback hosts, unless http is allowed", async () => {
    const verifier = createExternalTokenVerifier({ clock: movableClock(), timeoutMs: 200 });
    const token = await peer.clientCredentialsToken({ audience: AUD });
    await refused(
      verifier.verify(token, { issuer: "http://issuer.example", audience: AUD }),
      /must be an https URL/,
    );
    await refused(
      verifier.verify(token, { issuer: "ftp://issuer.example", audience: AUD }),
      /must be an https URL/,
    );
  });

  it("refuses a discovery document naming another issuer, or a non-https jwks_uri", async () => {
    const verifier = createExternalTokenVerifier({ clock: movableClock() });
    const token = await peer.clientCredentialsToken({ audience: AUD });
    const liar = await jsonServer((_url) => ({ issuer: peer.issuer, jwks_uri: `${peer.issuer}/jwks` }));
    const plain = await jsonServer((_url, base) => ({ issuer: base, jwks_uri: "http://keys.example/jwks" }));
    try {
      await refused(verifier.verify(token, { issuer: liar.url, audience: AUD }), /names another issuer/);
      await refused(
        verifier.verify(token, { issuer: plain.url, audience: AUD }),
        /jwks_uri .* must be an https URL/,
      );
    } finally {
      liar.server.close();
      plain.server.close();
    }
  });

  it("bounds upstream responses in size and time", async () => {
    const verifier = createExternalTokenVerifier({ clock: movableClock(), timeoutMs: 300, maxBytes: 4096 });
    const token = await peer.clientCredentialsToken({ audience: AUD });
    const huge = await jsonServer((_url, base) => ({
      issuer: base,
      jwks_uri: `${base}/jwks`,
      pad: "x".repeat(10_000),
    }));
    const silent = await jsonServer(() => undefined);
    try {
      await refused(verifier.verify(token, { issuer: huge.url, audience: AUD }), /larger than 4096 bytes/);
      await refused(verifier.verify(token, { issuer: silent.url, audience: AUD }), /timed out after 300 ms/);
    } finally {
      huge.server.closeAllConnections();
      silent.server.closeAllConnections();
      huge.server.close();
      silent.server.close();
    }
  });

  it("verifyWithKeys checks against registered keys only, without any fetch", async () => {
    const verifier = createExternalTokenVerifier({ clock: movableClock() });
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" }] };
    const now = Math.floor(Date.now() / 1000);
    const sign = (aud: string) =>
      new SignJWT({})
        .setProtectedHeader({ alg: "ES256", kid: "k1" })
        .setIssuer("https://pull-tokens.example")
        .setSubject("bot")
        .setAudience(aud)
        .setIssuedAt(now)
        .setExpirationTime(now + 600)
        .sign(privateKey);
    const ok = await verifier.verifyWithKeys(await sign(AUD), jwks, {
      issuer: "https://pull-tokens.example",
      subject: "bot",
      audience: AUD,
    });
    assert.equal(ok.claims.sub, "bot");
    await refused(
      verifier.verifyWithKeys(await sign("https://other.example"), jwks, {
        issuer: "https://pull-tokens.example",
        audience: AUD,
      }),
      /audience/,
    );
    const stranger = await importJWK(
      { ...(await exportJWK((await generateKeyPair("ES256", { extractable: true })).privateKey)) },
      "ES256",
    );
    const bySomeoneElse = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "k1" })
      .setIssuer("https://pull-tokens.example")
      .setSubject("bot")
      .setAudience(AUD)
      .setExpirationTime(now + 600)
      .sign(stranger);
    await refused(
      verifier.verifyWithKeys(bySomeoneElse, jwks, { issuer: "https://pull-tokens.example", audience: AUD }),
      /signature is invalid/,
    );
  });
});
