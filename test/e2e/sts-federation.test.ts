import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from "jose";
import { revokeTokens } from "../../src/auth/token-revocations.js";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { expectError, expectJson, type StatusBody } from "../support/api-assertions.js";
import { type OidcPeer, startOidcPeer } from "../support/oidc-peer.js";
import { pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

interface RawToken {
  token: string;
  expiry: string;
  refreshToken?: string;
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

describe("token federation: /sts/exchange against a real upstream issuer", () => {
  let peer: OidcPeer;
  let stranger: OidcPeer;
  let wharf: TestServer;
  let skewMs = 0;
  let acme: string;
  let globex: string;
  /** claimMatch on the peer's `ci` client with exact and pattern claims; owner of acme. */
  let ciIdentity: string;
  /** Same upstream subject, under globex, viewer there. */
  let globexIdentity: string;

  /** GET /sts/exchange with `token` as Bearer and `params` in the query string. */
  function exchange(token: string, params: Record<string, string | string[]> = {}): Promise<Response> {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) for (const one of [v].flat()) query.append(k, one);
    return wharf.api(`/sts/exchange?${query}`, { token });
  }

  async function exchanged(token: string, params: Record<string, string | string[]> = {}): Promise<RawToken> {
    return expectJson<RawToken>(await exchange(token, params));
  }

  async function denied(res: Response, pattern: RegExp): Promise<StatusBody> {
    const body = await expectError(res, { status: 403, code: 7, reason: "PERMISSION_DENIED" });
    assert.match(body.message, pattern);
    return body;
  }

  const ciToken = (audience = wharf.apiUrl) => peer.clientCredentialsToken({ audience });

  async function identity(
    parent: string,
    name: string,
    claimMatch: Record<string, unknown>,
  ): Promise<string> {
    return wharf.create(`/iam/v2/identities/${parent}`, { name, claimMatch });
  }

  async function bind(group: string, identityUid: string, role: string): Promise<string> {
    return wharf.create(`/iam/v2/roleBindings/${group}`, { identityUid, roleUid: builtInRoleUid(role) });
  }

  before(async () => {
    peer = await startOidcPeer();
    stranger = await startOidcPeer();
    wharf = await startTestServer({
      clock: { now: () => Date.now() + skewMs },
      federation: { jwksCooldownMs: 0 },
    });
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    globex = await wharf.create("/iam/v2/groups", { name: "globex" });
    ciIdentity = await identity(acme, "ci", {
      issuer: peer.issuer,
      subject: "ci",
      claims: { repository: "acme/app" },
      claimPatterns: { ref: "refs/heads/.*" },
    });
    await bind(acme, ciIdentity, "owner");
    globexIdentity = await identity(globex, "globex-ci", { issuer: peer.issuer, subject: "ci" });
    await bind(globex, globexIdentity, "viewer");
  });
  after(async () => {
    await wharf?.close();
    await peer?.close();
    await stranger?.close();
  });

  it("exchanges a real upstream token: sub = identity, aud = API, act = upstream iss/sub/aud, 1 h", async () => {
    const upstream = await ciToken();
    const raw = await exchanged(upstream, { identity: ciIdentity });
    const claims = decodeJwt(raw.token);
    assert.equal(claims.iss, wharf.apiUrl);
    assert.equal(claims.sub, ciIdentity);
    assert.equal(claims.aud, wharf.apiUrl);
    assert.deepEqual(claims.act, { iss: peer.issuer, sub: "ci", aud: wharf.apiUrl });
    assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), 3600);
    assert.equal(Date.parse(raw.expiry), (claims.exp ?? 0) * 1000, "expiry is the token's exp");
    assert.equal(raw.refreshToken, undefined, "no refresh token unless asked");
    // The token works on the API with the identity's bindings.
    const repo = await expectJson<{ name: string }>(
      await wharf.api(`/registry/v2/repos/${acme}`, {
        method: "POST",
        token: raw.token,
        body: { name: "via-sts" },
      }),
    );
    assert.equal(repo.name, "via-sts");
    // lastSeenTime is set.
    const seen = await expectJson<{ lastSeenTime?: string }>(
      await wharf.api(`/iam/v2/identities/${ciIdentity}`, { token: wharf.adminToken }),
    );
    assert.ok(seen.lastSeenTime && Date.parse(seen.lastSeenTime) > Date.now() - 60_000, "lastSeenTime set");
  });

  it("POST with a form body works too, and the registry audience pushes and pulls through the registry", async () => {
    const res = await fetch(`${wharf.apiUrl}/sts/exchange`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${await ciToken()}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ identity: ciIdentity, aud: wharf.registryUrl }),
    });
    const raw = await expectJson<RawToken>(res);
    assert.equal(decodeJwt(raw.token).aud, wharf.registryUrl);
    const image = await pushImage(wharf, "acme/federated", "latest", raw.token, "federated-image");
    const pulled = await wharf.registry(`/v2/acme/federated/manifests/latest`, {
      token: raw.token,
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    });
    assert.equal(pulled.status, 200);
    assert.equal(pulled.headers.get("docker-content-digest"), image.digest);
    await pulled.arrayBuffer();
    // Through /token with Basic _token:<token>, as docker and skopeo do.
    const basic = `Basic ${Buffer.from(`_token:${raw.token}`).toString("base64")}`;
    const issued = await expectJson<{ token: string }>(
      await wharf.registry("/token?scope=repository:acme/federated:pull", {
        headers: { authorization: basic },
      }),
    );
    const blob = await wharf.registry(`/v2/acme/federated/blobs/${image.configDigest}`, {
      token: issued.token,
    });
    assert.equal(blob.status, 200);
    await blob.arrayBuffer();
    // An API-audience token is refused by the registry (403), a registry one by the API.
    const apiOnly = await exchanged(await ciToken(), { identity: ciIdentity });
    const refused = await wharf.registry("/v2/acme/federated/manifests/latest", { token: apiOnly.token });
    assert.equal(refused.status, 403);
    await refused.arrayBuffer();
    const both = await exchanged(await ciToken(), {
      identity: ciIdentity,
      aud: `${wharf.apiUrl},${wharf.registryUrl}`,
    });
    assert.deepEqual(decodeJwt(both.token).aud, [wharf.apiUrl, wharf.registryUrl]);
  });

  it("refuses an expired upstream token", async () => {
    const upstream = await ciToken();
    skewMs = 3600_000 + 60_000;
    try {
      await denied(
        await exchange(upstream, { identity: ciIdentity }),
        /^Permission denied: verifying token: token has expired$/,
      );
    } finally {
      skewMs = 0;
    }
  });

  it("refuses a token for the wrong audience", async () => {
    const upstream = await ciToken("https://somewhere-else.example");
    await denied(
      await exchange(upstream, { identity: ciIdentity }),
      /verifying token: token does not match identity/,
    );
  });

  it("refuses a token of another issuer (never fetching it)", async () => {
    const upstream = await stranger.clientCredentialsToken({ audience: wharf.apiUrl });
    const fetched = stranger.requests("/.well-known/openid-configuration");
    await denied(await exchange(upstream, { identity: ciIdentity }), /token does not match identity/);
    assert.equal(
      stranger.requests("/.well-known/openid-configuration"),
      fetched,
      "the stranger was never asked",
    );
  });

  it("an unknown kid refetches the issuer's keys and is still refused", async () => {
    await exchanged(await ciToken(), { identity: ciIdentity }); // keys cached
    const { privateKey } = await generateKeyPair("ES256");
    const now = Math.floor(Date.now() / 1000);
    const forged = await new SignJWT({ repository: "acme/app", ref: "refs/heads/main" })
      .setProtectedHeader({ alg: "ES256", kid: "unknown-kid" })
      .setIssuer(peer.issuer)
      .setSubject("ci")
      .setAudience(wharf.apiUrl)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(privateKey);
    const before = peer.requests("/jwks");
    await denied(
      await exchange(forged, { identity: ciIdentity }),
      /verifying token: token is signed by a key .* does not publish/,
    );
    assert.equal(peer.requests("/jwks") - before, 1, "the key set was refetched once");
  });

  it('refuses alg "none"', async () => {
    const now = Math.floor(Date.now() / 1000);
    const payload = {
      iss: peer.issuer,
      sub: "ci",
      aud: wharf.apiUrl,
      exp: now + 300,
      repository: "acme/app",
      ref: "refs/heads/main",
    };
    const unsigned = `${b64({ alg: "none" })}.${b64(payload)}.`;
    await denied(await exchange(unsigned, { identity: ciIdentity }), /algorithm "none" is not allowed/);
  });

  it("refuses HS256 signed with the issuer's public key", async () => {
    const jwks = (await (await fetch(`${peer.issuer}/jwks`)).json()) as { keys: Record<string, unknown>[] };
    const now = Math.floor(Date.now() / 1000);
    const payload = {
      iss: peer.issuer,
      sub: "ci",
      aud: wharf.apiUrl,
      exp: now + 300,
      repository: "acme/app",
      ref: "refs/heads/main",
    };
    const input = `${b64({ alg: "HS256", kid: jwks.keys[0]?.kid })}.${b64(payload)}`;
    const mac = createHmac("sha256", JSON.stringify(jwks.keys[0])).update(input).digest("base64url");
    await denied(
      await exchange(`${input}.${mac}`, { identity: ciIdentity }),
      /algorithm "HS256" is not allowed/,
    );
  });

  it("refuses a subject mismatch with the same answer as a missing identity", async () => {
    const deploy = await identity(acme, "deploy", { issuer: peer.issuer, subject: "deploy" });
    const upstream = await ciToken();
    const mismatch = await denied(
      await exchange(upstream, { identity: deploy }),
      /token does not match identity/,
    );
    const missing = `${acme}/0123456789abcdef`;
    const absent = await denied(
      await exchange(upstream, { identity: missing }),
      /token does not match identity/,
    );
    assert.equal(
      absent.message.replace(missing, "X"),
      mismatch.message.replace(deploy, "X"),
      "no existence leak",
    );
    const garbage = await denied(
      await exchange(upstream, { identity: "not-a-uid" }),
      /token does not match identity/,
    );
    assert.equal(garbage.code, mismatch.code);
  });

  it("refuses a claim or claim-pattern mismatch", async () => {
    const otherRepo = await identity(acme, "other-repo", {
      issuer: peer.issuer,
      subject: "ci",
      claims: { repository: "acme/other" },
    });
    const tagsOnly = await identity(acme, "tags-only", {
      issuerPattern: "http://127\\.0\\.0\\.1:\\d+",
      subjectPattern: "c.*",
      claimPatterns: { ref: "refs/tags/v.*" },
    });
    await denied(await exchange(await ciToken(), { identity: otherRepo }), /token does not match identity/);
    await denied(await exchange(await ciToken(), { identity: tagsOnly }), /token does not match identity/);
    // The same patterns with a matching claim pass (issuer trusted through issuerPattern).
    const branches = await identity(acme, "branches", {
      issuerPattern: "http://127\\.0\\.0\\.1:\\d+",
      subjectPattern: "c.*",
      audiencePattern: "http://127\\.0\\.0\\.1:\\d+",
      claimPatterns: { ref: "refs/heads/.*" },
    });
    assert.equal(decodeJwt((await exchanged(await ciToken(), { identity: branches })).token).sub, branches);
  });

  it("an identity of another organization cannot act here; scopes outside its reach give nothing", async () => {
    const raw = await exchanged(await ciToken(), { identity: globexIdentity });
    const create = await wharf.api(`/registry/v2/repos/${acme}`, {
      method: "POST",
      token: raw.token,
      body: { name: "x" },
    });
    await expectError(create, { status: 403, code: 7 });
    const scoped = await exchanged(await ciToken(), { identity: globexIdentity, scopes: acme });
    assert.deepEqual(decodeJwt(scoped.token).scope, [acme]);
    const groups = await expectJson<{ groups?: unknown[] }>(
      await wharf.api("/iam/v2/groups", { token: scoped.token }),
    );
    assert.equal(
      groups.groups?.length ?? 0,
      0,
      "nothing visible: acme is outside its bindings, globex outside its scope",
    );
    const unscoped = await expectJson<{ groups?: { uid: string }[] }>(
      await wharf.api("/iam/v2/groups", { token: raw.token }),
    );
    assert.deepEqual(
      unscoped.groups?.map((g) => g.uid),
      [globex],
    );
  });

  it("scopes and capabilities restrict the token; bad ones are INVALID_ARGUMENT", async () => {
    const raw = await exchanged(await ciToken(), {
      identity: ciIdentity,
      cap: "repo.list,groups.list",
      scopes: acme,
    });
    const claims = decodeJwt(raw.token);
    assert.deepEqual(claims.cap, ["groups.list", "repo.list"]);
    await expectJson(await wharf.api(`/registry/v2/repos?uidp.descendants_of=${acme}`, { token: raw.token }));
    const create = await wharf.api(`/registry/v2/repos/${acme}`, {
      method: "POST",
      token: raw.token,
      body: { name: "y" },
    });
    await expectError(create, { status: 403, code: 7 });
    const upstream = await ciToken();
    await expectError(await exchange(upstream, { identity: ciIdentity, scopes: "not/a/uidp" }), {
      status: 400,
      code: 3,
      field: "scopes",
    });
    await expectError(await exchange(upstream, { identity: ciIdentity, cap: "repo.fly" }), {
      status: 400,
      code: 3,
      field: "cap",
    });
    await expectError(await exchange(upstream, { identity: ciIdentity, aud: "https://evil.example" }), {
      status: 400,
      code: 3,
      field: "aud",
    });
  });

  it("re-issues a Wharf token for another audience, only ever narrower and never longer", async () => {
    const admin = await wharf.tokenFor(ADMIN_IDENTITY_UID, 600);
    const reg = await exchanged(admin, { aud: wharf.registryUrl });
    const claims = decodeJwt(reg.token);
    assert.equal(claims.sub, ADMIN_IDENTITY_UID);
    assert.equal(claims.aud, wharf.registryUrl);
    assert.ok((claims.exp ?? 0) <= (decodeJwt(admin).exp ?? 0), "never outlives the presented token");
    // Narrow to acme + repo.list, then try to widen: the result stays within the first restriction.
    const narrow = await exchanged(admin, { scopes: acme, cap: "repo.list" });
    const wider = await exchanged(narrow.token, { scopes: [acme, globex], cap: "repo.list,repo.create" });
    const wc = decodeJwt(wider.token);
    assert.deepEqual(wc.scope, [acme]);
    assert.deepEqual(wc.cap, ["repo.list"]);
    assert.deepEqual((wc.act as Record<string, unknown>).sub, ADMIN_IDENTITY_UID);
    await expectError(await exchange(admin, { create_refresh_token: "true" }), { status: 400, code: 3 });
    await denied(await exchange(`${admin.slice(0, -4)}AAAA`), /verifying token: token signature is invalid/);
  });

  it("static-keys identities: verified with the registered keys, refused once expired", async () => {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    const jwk = { ...(await exportJWK(publicKey)), kid: "bot-key", alg: "ES256", use: "sig" };
    const expirationTime = new Date(Date.now() + 2 * 3600_000).toISOString();
    const bot = await wharf.create(`/iam/v2/identities/${acme}`, {
      name: "bot",
      staticKeys: {
        issuer: "https://bot.example",
        subject: "bot",
        issuerKeys: JSON.stringify({ keys: [jwk] }),
        expirationTime,
      },
    });
    await bind(acme, bot, "viewer");
    const sign = (exp: number) =>
      new SignJWT({})
        .setProtectedHeader({ alg: "ES256", kid: "bot-key" })
        .setIssuer("https://bot.example")
        .setSubject("bot")
        .setAudience(wharf.apiUrl)
        .setIssuedAt()
        .setExpirationTime(exp)
        .sign(privateKey);
    const far = Math.floor(Date.now() / 1000) + 6 * 3600;
    const raw = await exchanged(await sign(far), { identity: bot });
    assert.equal(decodeJwt(raw.token).sub, bot);
    assert.deepEqual((decodeJwt(raw.token).act as Record<string, unknown>).iss, "https://bot.example");
    // The JWT itself expired.
    await denied(
      await exchange(await sign(Math.floor(Date.now() / 1000) - 120), { identity: bot }),
      /token has expired/,
    );
    // The identity's keys expired (the JWT is still valid).
    skewMs = 2 * 3600_000 + 1000;
    try {
      await denied(await exchange(await sign(far), { identity: bot }), /static keys have expired/);
    } finally {
      skewMs = 0;
    }
  });

  it("refresh tokens rotate; reusing a spent one revokes the whole family", async () => {
    const first = await exchanged(await ciToken(), { identity: ciIdentity, create_refresh_token: "true" });
    assert.match(first.refreshToken ?? "", /^wrt_[\w-]{43}$/);
    const refresh = (token: string, params: Record<string, string> = {}) =>
      fetch(`${wharf.apiUrl}/sts/exchange_refresh_token`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(params),
      });
    type Pair = { token: RawToken; refreshToken: RawToken };
    const second = await expectJson<Pair>(await refresh(first.refreshToken ?? ""));
    const sc = decodeJwt(second.token.token);
    assert.equal(sc.sub, ciIdentity);
    assert.deepEqual(sc.act, { iss: peer.issuer, sub: "ci", aud: wharf.apiUrl });
    assert.notEqual(second.refreshToken.token, first.refreshToken);
    await expectJson(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${acme}`, { token: second.token.token }),
    );
    // Narrowing is allowed, widening the audience is not (and does not spend the token).
    await denied(
      await refresh(second.refreshToken.token, { aud: wharf.registryUrl }),
      /not issued for audience/,
    );
    const third = await expectJson<Pair>(await refresh(second.refreshToken.token, { cap: "repo.list" }));
    assert.deepEqual(decodeJwt(third.token.token).cap, ["repo.list"]);
    // Replaying the first (spent) token is refused and revokes the family: the newest stops working.
    await denied(await refresh(first.refreshToken ?? ""), /already used/);
    await denied(await refresh(third.refreshToken.token), /refresh token is not valid/);
  });

  it("a revoked identity's older tokens and refresh tokens stop working; it can exchange anew", async () => {
    const revoked = await identity(acme, "revoked-ci", { issuer: peer.issuer, subject: "ci" });
    await bind(acme, revoked, "viewer");
    const before = await exchanged(await ciToken(), { identity: revoked, create_refresh_token: "1" });
    const list = (token: string) => wharf.api(`/registry/v2/repos?uidp.descendants_of=${acme}`, { token });
    await expectJson(await list(before.token));
    const revocation = await revokeTokens(
      wharf.store.tokenRevocations,
      { subject: revoked },
      { now: Date.now(), acceptedForMs: 3600_000 },
    );
    const refresh = (token: string) =>
      fetch(`${wharf.apiUrl}/sts/exchange_refresh_token`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
      });
    // The refresh check reads the revocations at once; the access token within the poll interval.
    await denied(await refresh(before.refreshToken ?? ""), /refresh token has been revoked/);
    const deadline = Date.now() + 5000;
    while ((await list(before.token)).status !== 401) {
      assert.ok(Date.now() < deadline, "the revoked access token is refused within seconds");
      await new Promise((r) => setTimeout(r, 100));
    }
    while (Date.now() <= revocation.issuedBefore) await new Promise((r) => setTimeout(r, 50));
    const after = await exchanged(await ciToken(), { identity: revoked, create_refresh_token: "1" });
    await expectJson(await list(after.token));
    const rotated = await expectJson<{ token: RawToken }>(await refresh(after.refreshToken ?? ""));
    await expectJson(await list(rotated.token.token));
  });

  it("a deleted identity's refresh tokens stop working", async () => {
    const temp = await identity(acme, "temp", { issuer: peer.issuer, subject: "ci" });
    const binding = await bind(acme, temp, "viewer");
    const raw = await exchanged(await ciToken(), { identity: temp, create_refresh_token: "1" });
    await expectJson(
      await wharf.api(`/iam/v2/roleBindings/${binding}`, { method: "DELETE", token: wharf.adminToken }),
    );
    await expectJson(
      await wharf.api(`/iam/v2/identities/${temp}`, { method: "DELETE", token: wharf.adminToken }),
    );
    const res = await fetch(`${wharf.apiUrl}/sts/exchange_refresh_token`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw.refreshToken}` },
    });
    await denied(res, /refresh token is not valid/);
  });

  it("serves the client configuration at /auth/v1/config", async () => {
    const config = await expectJson<Record<string, string>>(await wharf.api("/auth/v1/config"));
    assert.equal(config.issuer, wharf.apiUrl);
    assert.equal(config.registry_url, wharf.registryUrl);
    assert.equal(config.sts_exchange_endpoint, `${wharf.apiUrl}/sts/exchange`);
  });
});
