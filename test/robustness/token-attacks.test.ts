import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create, fromBinary, type MessageShape, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  base64url,
  type CryptoKey,
  decodeProtectedHeader,
  exportSPKI,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTPayload,
  SignJWT,
} from "jose";
import { createSigningKeyRing } from "../../src/auth/signing-keys.js";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { systemClock } from "../../src/core/clock.js";
import { GetGroupRequestSchema, GroupSchema } from "../../src/gen/platform/iam/v2/groups_pb.js";
import { pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";
import { assertApiAnswer, assertOciAnswer, rawRequest } from "./robustness-support.js";

// Forged, altered and misused tokens against every surface that takes one: the platform API over
// REST, gRPC (grpc-js) and Connect, and the registry's /v2/ routes and /token. Each attack is
// refused with 401/403 (gRPC UNAUTHENTICATED/PERMISSION_DENIED): never 200, never a 5xx. The same
// requests with a genuine token answer 200, so a refusal is the token's doing, not the request's.

/** Everything an attack may use: the issuer's real signing key, its public JWK, and the server. */
interface Forge {
  wharf: TestServer;
  /** The audience of the surface under attack. */
  audience: string;
  /** The audience of the other surface (API ↔ registry). */
  otherAudience: string;
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

const now = () => Math.floor(Date.now() / 1000);

/** Claims a genuine admin token for `audience` carries. */
function adminClaims(f: Forge, overrides: JWTPayload = {}): JWTPayload {
  return {
    iss: f.wharf.apiUrl,
    sub: ADMIN_IDENTITY_UID,
    aud: f.audience,
    iat: now(),
    exp: now() + 600,
    jti: crypto.randomUUID(),
    ...overrides,
  };
}

/** Signs `claims` with the issuer's own key (and its kid) unless told otherwise. */
function signed(
  f: Forge,
  claims: JWTPayload,
  header: { alg?: string; kid?: string } = {},
  key: CryptoKey | Uint8Array = f.privateKey,
): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: header.alg ?? "ES256", kid: header.kid ?? f.kid, typ: "JWT" })
    .sign(key);
}

const segment = (value: object) => base64url.encode(JSON.stringify(value));

/** The attacks, by name: each makes the token (or the whole Authorization value) to present. */
const ATTACKS: Record<string, (f: Forge) => Promise<{ token: string } | { header: string }>> = {
  "alg none": async (f) => ({
    token: `${segment({ alg: "none", typ: "JWT", kid: f.kid })}.${segment(adminClaims(f))}.`,
  }),
  "alg none, signature kept": async (f) => {
    const genuine = await signed(f, adminClaims(f));
    return {
      token: `${segment({ alg: "none", typ: "JWT" })}.${genuine.split(".")[1]}.${genuine.split(".")[2]}`,
    };
  },
  "HS256 keyed with the issuer's public key (PEM)": async (f) => {
    const pem = await exportSPKI((await importJWK(f.publicJwk, "ES256")) as CryptoKey);
    return { token: await signed(f, adminClaims(f), { alg: "HS256" }, new TextEncoder().encode(pem)) };
  },
  "HS256 keyed with the issuer's public JWK (JSON)": async (f) => ({
    token: await signed(
      f,
      adminClaims(f),
      { alg: "HS256" },
      new TextEncoder().encode(JSON.stringify(f.publicJwk)),
    ),
  }),
  expired: async (f) => ({
    token: await signed(f, adminClaims(f, { iat: now() - 7200, exp: now() - 3600 })),
  }),
  "not yet valid (nbf in the future)": async (f) => ({
    token: await signed(f, adminClaims(f, { nbf: now() + 3600, exp: now() + 7200 })),
  }),
  "issued in the future (iat)": async (f) => ({
    token: await signed(f, adminClaims(f, { iat: now() + 3600, exp: now() + 7200 })),
  }),
  "wrong audience (the other surface's)": async (f) => ({
    token: await signed(f, adminClaims(f, { aud: f.otherAudience })),
  }),
  "wrong audience (elsewhere)": async (f) => ({
    token: await signed(f, adminClaims(f, { aud: "https://elsewhere.example" })),
  }),
  "wrong issuer": async (f) => ({ token: await signed(f, adminClaims(f, { iss: "https://evil.example" })) }),
  "no expiry": async (f) => {
    const { exp: _exp, ...claims } = adminClaims(f);
    return { token: await signed(f, claims) };
  },
  "unknown kid": async (f) => ({
    token: await signed(f, adminClaims(f), { kid: "not-a-key-of-this-issuer" }),
  }),
  "another ES256 key with the issuer's kid": async (f) => {
    const { privateKey } = await generateKeyPair("ES256");
    return { token: await signed(f, adminClaims(f), {}, privateKey) };
  },
  "tampered payload (sub changed to the administrator)": async (f) => {
    const someone = "0123456789abcdef0123456789abcdef01234567";
    const genuine = await signed(f, adminClaims(f, { sub: someone }));
    const [header, , signature] = genuine.split(".");
    return { token: `${header}.${segment(adminClaims(f))}.${signature}` };
  },
  "truncated signature": async (f) => ({ token: (await signed(f, adminClaims(f))).slice(0, -10) }),
  "signature removed": async (f) => {
    const [header, payload] = (await signed(f, adminClaims(f))).split(".");
    return { token: `${header}.${payload}.` };
  },
  "header and payload only": async (f) => {
    const [header, payload] = (await signed(f, adminClaims(f))).split(".");
    return { token: `${header}.${payload}` };
  },
  "empty Bearer": async () => ({ header: "Bearer " }),
  "Bearer without a token": async () => ({ header: "Bearer" }),
  garbage: async () => ({ token: "garbage" }),
  "three junk segments": async () => ({ token: "e30.e30.e30" }),
};

/** How a surface answered: an HTTP status (and gRPC code where there is one). */
interface Answer {
  status: number;
  grpcCode?: number;
  what: string;
}

/** `Authorization` value of an attack. */
const authorizationOf = (attack: { token: string } | { header: string }) =>
  "header" in attack ? attack.header : `Bearer ${attack.token}`;

describe("token attacks: every forged or misused token is refused on every surface", () => {
  let wharf: TestServer;
  let org: string;
  let grpcClient: grpc.Client;
  let kid: string;
  let privateKey: CryptoKey;
  let publicJwk: JWK;

  before(async () => {
    wharf = await startTestServer();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    await pushImage(wharf, "acme/app", "latest", await wharf.registryToken(), "attacks");
    grpcClient = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    // The issuer's current key, read from the store as the server reads it.
    const ring = createSigningKeyRing({ signingKeys: wharf.store.signingKeys, clock: systemClock });
    ({ kid, privateKey } = await ring.current());
    const jwks = (await (await fetch(`${wharf.apiUrl}/.well-known/jwks.json`)).json()) as { keys: JWK[] };
    const published = jwks.keys.find((k) => k.kid === kid);
    assert.ok(published, "the signing key is published in the JWKS");
    publicJwk = published;
    assert.equal(
      decodeProtectedHeader(wharf.adminToken).kid,
      kid,
      "tests forge with the key the server signs with",
    );
  });
  after(async () => {
    grpcClient.close();
    await wharf.close();
  });

  const forge = (surface: "api" | "registry"): Forge => ({
    wharf,
    audience: surface === "api" ? wharf.apiUrl : wharf.registryUrl,
    otherAudience: surface === "api" ? wharf.registryUrl : wharf.apiUrl,
    kid,
    privateKey,
    publicJwk,
  });

  /** The surfaces: each sends one authenticated request and reports how it was answered. */
  const SURFACES: Record<
    string,
    { audience: "api" | "registry"; call: (authorization: string) => Promise<Answer> }
  > = {
    "REST GET /iam/v2/groups/{uid}": {
      audience: "api",
      async call(authorization) {
        const req = { method: "GET", path: `/iam/v2/groups/${org}`, headers: { authorization } };
        const res = await rawRequest(wharf.apiUrl, req);
        assertApiAnswer(req, res);
        return { status: res.status, what: `${res.status} ${res.body.toString("utf8").slice(0, 300)}` };
      },
    },
    "Connect GetGroup": {
      audience: "api",
      async call(authorization) {
        const res = await rawRequest(wharf.apiUrl, {
          method: "POST",
          path: "/platform.iam.v2.GroupsService/GetGroup",
          headers: { authorization, "content-type": "application/json", "connect-protocol-version": "1" },
          body: JSON.stringify({ uid: org }),
        });
        return { status: res.status, what: `${res.status} ${res.body.toString("utf8").slice(0, 300)}` };
      },
    },
    "gRPC GetGroup (grpc-js)": {
      audience: "api",
      call(authorization) {
        const metadata = new grpc.Metadata();
        metadata.set("authorization", authorization);
        return new Promise((resolve) => {
          grpcClient.makeUnaryRequest(
            "/platform.iam.v2.GroupsService/GetGroup",
            (m: MessageShape<typeof GetGroupRequestSchema>) =>
              Buffer.from(toBinary(GetGroupRequestSchema, m)),
            (b: Buffer) => fromBinary(GroupSchema, b),
            create(GetGroupRequestSchema, { uid: org }),
            metadata,
            (error) =>
              resolve(
                error
                  ? { status: 0, grpcCode: error.code, what: `gRPC ${error.code} ${error.details}` }
                  : { status: 200, grpcCode: 0, what: "OK" },
              ),
          );
        });
      },
    },
    "registry GET /v2/": {
      audience: "registry",
      async call(authorization) {
        const req = { method: "GET", path: "/v2/", headers: { authorization } };
        const res = await rawRequest(wharf.registryUrl, req);
        assertOciAnswer(req, res);
        return { status: res.status, what: `${res.status} ${res.body.toString("utf8").slice(0, 300)}` };
      },
    },
    "registry GET /v2/acme/app/manifests/latest": {
      audience: "registry",
      async call(authorization) {
        const req = {
          method: "GET",
          path: "/v2/acme/app/manifests/latest",
          headers: { authorization, accept: "application/vnd.oci.image.manifest.v1+json" },
        };
        const res = await rawRequest(wharf.registryUrl, req);
        assertOciAnswer(req, res);
        return { status: res.status, what: `${res.status} ${res.body.toString("utf8").slice(0, 300)}` };
      },
    },
    "registry /token (Basic _token:<jwt>)": {
      audience: "registry",
      async call(authorization) {
        const token = authorization.replace(/^Bearer ?/, "");
        const req = {
          method: "GET",
          path: "/token?scope=repository:acme/app:pull,push",
          headers: { authorization: `Basic ${Buffer.from(`_token:${token}`).toString("base64")}` },
        };
        const res = await rawRequest(wharf.registryUrl, req);
        assertOciAnswer(req, res);
        return { status: res.status, what: `${res.status} ${res.body.toString("utf8").slice(0, 300)}` };
      },
    },
  };
  describe("a genuine token is accepted (the control)", () => {
    for (const [surfaceName, surface] of Object.entries(SURFACES)) {
      it(surfaceName, async () => {
        const token = await signed(forge(surface.audience), adminClaims(forge(surface.audience)));
        const answer = await surface.call(`Bearer ${token}`);
        assert.equal(answer.status, 200, answer.what);
      });
    }
  });

  for (const [attackName, attack] of Object.entries(ATTACKS)) {
    describe(attackName, () => {
      for (const [surfaceName, surface] of Object.entries(SURFACES)) {
        it(`is refused by ${surfaceName}`, async () => {
          const answer = await surface.call(authorizationOf(await attack(forge(surface.audience))));
          if (answer.grpcCode !== undefined) {
            // UNAUTHENTICATED or PERMISSION_DENIED, nothing else (INTERNAL, UNKNOWN… would be a fault).
            assert.ok(answer.grpcCode === 16 || answer.grpcCode === 7, answer.what);
          } else {
            assert.ok(answer.status === 401 || answer.status === 403, answer.what);
          }
        });
      }
    });
  }
});
