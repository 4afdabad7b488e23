import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { iam } from "wharf/sdk";
import { isPullToken, PULL_TOKEN_ISSUER, signEs256Jwt } from "./pull-token";

function decode(part: string): unknown {
  const padded = part.replace(/-/g, "+").replace(/_/g, "/");
  return JSON.parse(atob(padded));
}

function bytes(part: string): Uint8Array<ArrayBuffer> {
  const binary = atob(part.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

describe("signEs256Jwt", () => {
  it("makes a compact JWS whose 64-byte signature verifies with the public key", async () => {
    const keys = (await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, [
      "sign",
      "verify",
    ])) as CryptoKeyPair;
    const jwt = await signEs256Jwt(
      keys.privateKey,
      { alg: "ES256", kid: "k1", typ: "JWT" },
      { iss: PULL_TOKEN_ISSUER, sub: "s", exp: 2 },
    );
    const [header, claims, signature] = jwt.split(".") as [string, string, string];
    expect(jwt).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(decode(header)).toEqual({ alg: "ES256", kid: "k1", typ: "JWT" });
    expect(decode(claims)).toEqual({ iss: PULL_TOKEN_ISSUER, sub: "s", exp: 2 });
    const sig = bytes(signature);
    expect(sig.length).toBe(64);
    const verify = (input: string) =>
      crypto.subtle.verify(
        { name: "ECDSA", hash: "SHA-256" },
        keys.publicKey,
        sig,
        new TextEncoder().encode(input),
      );
    expect(await verify(`${header}.${claims}`)).toBe(true);
    expect(await verify(`${header}.${claims}x`)).toBe(false);
  });
});

describe("isPullToken", () => {
  it("accepts static-keys identities of the pull-token issuer only", () => {
    const keys = (issuer: string) =>
      create(iam.IdentitySchema, { relationship: { case: "staticKeys", value: { issuer } } });
    expect(isPullToken(keys(PULL_TOKEN_ISSUER))).toBe(true);
    expect(isPullToken(keys("https://other.example"))).toBe(false);
    expect(
      isPullToken(
        create(iam.IdentitySchema, {
          relationship: { case: "claimMatch", value: { issuer: PULL_TOKEN_ISSUER } },
        }),
      ),
    ).toBe(false);
  });
});
