import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { createLocalJWKSet, decodeJwt } from "jose";
import { createDeliverySigner } from "../../../src/auth/delivery-signer.js";
import { createIssuer } from "../../../src/auth/issuer.js";
import { bodyDigest, WEBHOOK_AUDIENCE, webhookSubject } from "../../../src/events/webhook-request.js";
import { createWebhookVerifier } from "../../../src/events/webhook-verifier.js";
import { openStore } from "../../../src/storage/sql/open-store.js";

const ISSUER_URL = "http://127.0.0.1:8080";
const T0 = Date.parse("2026-03-01T10:00:00.000Z");

describe("createDeliverySigner", async () => {
  const store = await openStore({ sqlitePath: ":memory:" });
  after(() => store.close());
  const clock = { now: () => T0 };
  const issuer = createIssuer({ store, issuerUrl: ISSUER_URL, clock });
  const sign = createDeliverySigner({ issuer, audience: WEBHOOK_AUDIENCE, ttlSeconds: 300, clock });
  const parts = (token: string) => {
    const [header, claims] = token.split(".").map((p) => Buffer.from(p, "base64url").toString("utf8"));
    return { header, claims };
  };

  it("makes the token issuer.mint makes: same header and claims, in the same order", async () => {
    const subject = webhookSubject("0123456789abcdef0123456789abcdef01234567");
    const digest = bodyDigest('{"actor":{"subject":""},"body":{}}');
    const token = await sign(subject, digest);
    const minted = await issuer.mint({
      subject,
      audience: WEBHOOK_AUDIENCE,
      ttlSeconds: 300,
      extraClaims: { webhook: { digest } },
    });
    const jti = String(decodeJwt(token).jti);
    assert.match(jti, /^[0-9a-f-]{36}$/, "a random jti");
    assert.notEqual(jti, decodeJwt(minted).jti, "jti differs per token");
    const mine = parts(token);
    const theirs = parts(minted);
    assert.equal(mine.header, theirs.header, "header bytes");
    assert.equal(
      mine.claims,
      theirs.claims?.replace(String(decodeJwt(minted).jti), jti),
      "claim bytes (but the jti)",
    );
    assert.equal(token.split(".")[2]?.length, 86, "a 64-byte (r‖s) ES256 signature");
  });

  it("verifies with the webhook verifier against the issuer's published keys", async () => {
    const body = '{"actor":{"subject":"x"},"body":{"name":"v1"}}';
    const group = "0123456789abcdef0123456789abcdef01234567";
    const token = await sign(webhookSubject(group), bodyDigest(body));
    const verify = createWebhookVerifier({
      issuer: ISSUER_URL,
      group,
      keys: createLocalJWKSet(await issuer.jwks()),
      clockToleranceSeconds: 10 * 365 * 86400,
    });
    const headers = {
      authorization: `Bearer ${token}`,
      "ce-id": "1",
      "ce-specversion": "1.0",
      "ce-source": ISSUER_URL,
      "ce-type": "t",
    };
    const event = await verify(headers, body);
    assert.equal(event.actor.subject, "x", "verified");
    await assert.rejects(verify(headers, `${body} `), /does not match the signed digest/, "digest bound");
  });
});
