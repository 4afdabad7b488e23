import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { redeemAuthorizationCode } from "../../../src/oidc/upstream-oidc.js";

describe("redeemAuthorizationCode", () => {
  let server: Server;
  let endpoint: string;
  let seen: { authorization?: string | undefined; body: string } = { body: "" };

  before(async () => {
    server = createServer(async (req: IncomingMessage, res) => {
      let body = "";
      for await (const chunk of req) body += chunk;
      seen = { authorization: req.headers.authorization, body };
      const code = new URLSearchParams(body).get("code");
      res.setHeader("content-type", "application/json");
      if (code === "huge") res.end(JSON.stringify({ id_token: "x".repeat(300 * 1024) }));
      else if (code === "bad") res.writeHead(400).end('{"error":"invalid_grant"}');
      else if (code === "no-id") res.end('{"access_token":"a"}');
      else res.end('{"id_token":"header.payload.sig"}');
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const redeem = (code: string, clientSecret = "s3cret") =>
    redeemAuthorizationCode({
      tokenEndpoint: endpoint,
      code,
      redirectUri: "http://127.0.0.1/cb",
      codeVerifier: "verifier",
      clientId: "wharf id",
      clientSecret,
    });

  it("authenticates a confidential client with Basic (form-encoded id) and returns the id_token", async () => {
    assert.equal(await redeem("ok"), "header.payload.sig");
    const basic = Buffer.from(String(seen.authorization).replace(/^Basic /, ""), "base64").toString();
    assert.equal(basic, "wharf%20id:s3cret", "RFC 6749 §2.3.1 encoding");
    assert.equal(new URLSearchParams(seen.body).get("code_verifier"), "verifier", "PKCE verifier sent");
    assert.equal(new URLSearchParams(seen.body).get("client_id"), null, "no client_id in the body");
  });

  it("sends only the client_id for a public client", async () => {
    await redeem("ok", "");
    assert.equal(seen.authorization, undefined, "no Basic header");
    assert.equal(new URLSearchParams(seen.body).get("client_id"), "wharf id");
  });

  it("refuses provider errors, answers without an ID token, and oversized answers", async () => {
    await assert.rejects(redeem("bad"), /refused the authorization code \(invalid_grant\)/);
    await assert.rejects(redeem("no-id"), /returned no ID token/);
    await assert.rejects(
      redeem("huge"),
      /larger than 262144 bytes/,
      "the answer is read only up to its bound",
    );
  });
});
