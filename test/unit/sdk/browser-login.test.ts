import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { browserLoginUrl, createPkcePair, randomUrlSafe } from "../../../src/sdk/index.js";

describe("browser login helpers", () => {
  it("makes PKCE pairs whose challenge is the verifier's SHA-256, fresh each time", async () => {
    const a = await createPkcePair();
    const b = await createPkcePair();
    assert.match(a.verifier, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(a.challenge, createHash("sha256").update(a.verifier).digest("base64url"));
    assert.notEqual(a.verifier, b.verifier);
    assert.match(randomUrlSafe(16), /^[A-Za-z0-9_-]{22}$/);
  });

  it("builds the /oauth URL with S256 and every parameter encoded", () => {
    const url = new URL(
      browserLoginUrl("https://wharf.example.com/ignored", {
        redirect: "https://wharf.example.com/login/callback",
        codeChallenge: "c".repeat(43),
        state: "s&t",
        identityProvider: "idp1",
        refreshToken: false,
        loginHint: "a@b.c",
      }),
    );
    assert.equal(url.origin + url.pathname, "https://wharf.example.com/oauth");
    const p = url.searchParams;
    assert.equal(p.get("redirect"), "https://wharf.example.com/login/callback");
    assert.equal(p.get("code_challenge_method"), "S256");
    assert.equal(p.get("state"), "s&t");
    assert.equal(p.get("identity_provider"), "idp1");
    assert.equal(p.get("create_refresh_token"), "false");
    assert.equal(p.get("login_hint"), "a@b.c");
    assert.equal(p.get("audience"), "", "the default audience: the API");
  });
});
