import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { decodeJwt, generateKeyPair, SignJWT } from "jose";
import { createIssuer } from "../../src/auth/issuer.js";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { createWharfClient } from "../../src/sdk/client.js";
import { staticToken } from "../../src/sdk/token-sources.js";
import { expectJson } from "../support/api-assertions.js";
import { ociErrorOf, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// ADR 0061: the registry's `/token` takes a platform API token as Bearer, so a browser gets a
// registry token in one request instead of an STS exchange and then `/token`.

interface TokenResponse {
  token: string;
  expires_in: number;
}

interface Claims {
  sub: string;
  aud: string | string[];
  exp: number;
  iat: number;
  access: { type: string; name: string; actions: string[] }[];
  scope?: string[];
  cap?: string[];
}

describe("registry /token in one request from a platform API token (Bearer)", () => {
  let wharf: TestServer;
  let acme: string;
  let puller: string;
  let pullerApi: string;

  /** GET `/token` with `authorization` and the scopes. */
  function tokenEndpoint(scopes: string[], authorization?: string): Promise<Response> {
    const query = new URLSearchParams({ service: new URL(wharf.registryUrl).host });
    for (const scope of scopes) query.append("scope", scope);
    return wharf.registry(`/token?${query}`, { headers: authorization ? { authorization } : {} });
  }

  async function issued(scopes: string[], authorization: string) {
    const body = await expectJson<TokenResponse>(await tokenEndpoint(scopes, authorization));
    return { body, claims: decodeJwt(body.token) as unknown as Claims };
  }

  /** The two-request path of before: the STS re-issues `apiToken` for the registry, then `/token`. */
  async function viaStsExchange(scopes: string[], apiToken: string) {
    const form = new URLSearchParams({ aud: wharf.registryUrl });
    const exchanged = await expectJson<{ token: string }>(
      await fetch(`${wharf.apiUrl}/sts/exchange`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiToken}`, "content-type": "application/x-www-form-urlencoded" },
        body: form,
      }),
    );
    return issued(scopes, `Bearer ${exchanged.token}`);
  }

  /** The platform API token the STS re-issues from `apiToken` narrowed to `params` (scopes, cap). */
  async function narrowed(apiToken: string, params: Record<string, string>): Promise<string> {
    const res = await fetch(`${wharf.apiUrl}/sts/exchange?${new URLSearchParams(params)}`, {
      headers: { authorization: `Bearer ${apiToken}` },
    });
    return (await expectJson<{ token: string }>(res)).token;
  }

  const manifestOf = (name: string, token: string) =>
    wharf.registry(`/v2/${name}/manifests/latest`, {
      token,
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    });

  const ALL_SCOPES = ["repository:acme/app:pull,push,delete", "repository:globex/app:pull"];

  before(async () => {
    wharf = await startTestServer();
    const adminReg = await wharf.registryToken();
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    await wharf.create("/iam/v2/groups", { name: "globex" });
    await pushImage(wharf, "acme/app", "latest", adminReg, "acme-app");
    await pushImage(wharf, "globex/app", "latest", adminReg, "globex-app");
    puller = await wharf.create(`/iam/v2/identities/${acme}`, {
      name: "puller",
      claimMatch: { issuer: "https://ci.example.com", subject: "puller" },
    });
    await wharf.create(`/iam/v2/roleBindings/${acme}`, {
      identityUid: puller,
      roleUid: builtInRoleUid("registry.pull"),
    });
    pullerApi = await wharf.tokenFor(puller);
  });
  after(() => wharf.close());

  it("grants exactly what the STS exchange path grants: the identity's own actions, its org only, for the registry", async () => {
    const direct = await issued(ALL_SCOPES, `Bearer ${pullerApi}`);
    assert.equal(direct.claims.sub, puller);
    assert.equal(direct.claims.aud, wharf.registryUrl);
    assert.deepEqual(direct.claims.access, [{ type: "repository", name: "acme/app", actions: ["pull"] }]);
    assert.ok(
      direct.body.expires_in > 0 && direct.body.expires_in <= 300,
      `expires_in ${direct.body.expires_in}`,
    );
    assert.equal(direct.claims.exp - direct.claims.iat, direct.body.expires_in);

    const twoSteps = await viaStsExchange(ALL_SCOPES, pullerApi);
    assert.deepEqual(direct.claims.access, twoSteps.claims.access);
    assert.equal(direct.body.expires_in, twoSteps.body.expires_in);

    // The token works where it grants, and only there (cross-organization refused).
    const pulled = await manifestOf("acme/app", direct.body.token);
    assert.equal(pulled.status, 200);
    await pulled.arrayBuffer();
    const foreignOrg = await manifestOf("globex/app", direct.body.token);
    assert.equal(foreignOrg.status, 401);
    assert.equal((await ociErrorOf(foreignOrg)).code, "UNAUTHORIZED");
  });

  it("never outlives the API token, and keeps its scope and cap limits", async () => {
    const short = await wharf.tokenFor(puller, 100);
    const capped = await issued(["repository:acme/app:pull"], `Bearer ${short}`);
    assert.ok(capped.body.expires_in <= 100, `expires_in ${capped.body.expires_in}`);
    assert.ok(capped.claims.exp <= (decodeJwt(short).exp ?? 0), "exp within the credential's");

    // The administrator's token narrowed to globex: no acme/app at all, and the limit is carried on.
    const globex = (
      await expectJson<{ groups: { uid: string }[] }>(
        await wharf.api("/iam/v2/groups?name=globex", { token: wharf.adminToken }),
      )
    ).groups[0]?.uid as string;
    const toGlobex = await narrowed(wharf.adminToken, { scopes: globex });
    const scoped = await issued(ALL_SCOPES, `Bearer ${toGlobex}`);
    assert.deepEqual(scoped.claims.access, [{ type: "repository", name: "globex/app", actions: ["pull"] }]);
    assert.deepEqual(scoped.claims.scope, [globex]);

    // A token limited to listing repositories may pull nothing.
    const listOnly = await narrowed(wharf.adminToken, { cap: "repo.list" });
    const none = await issued(ALL_SCOPES, `Bearer ${listOnly}`);
    assert.deepEqual(none.claims.access, []);
    assert.deepEqual(
      none.claims.access,
      (await viaStsExchange(ALL_SCOPES, listOnly)).claims.access,
      "the same as the exchange",
    );
  });

  it("leaves out what only the login's session grants give (egm), as the STS re-issue does", async () => {
    // An external group mapping of a globex identity provider grants registry.pull at globex.
    const globex = (
      await expectJson<{ groups: { uid: string }[] }>(
        await wharf.api("/iam/v2/groups?name=globex", { token: wharf.adminToken }),
      )
    ).groups[0]?.uid as string;
    const idp = await wharf.create(`/iam/v2/identityProviders/${globex}`, {
      name: "globex-sso",
      defaultRole: builtInRoleUid("viewer"),
      oidc: { issuer: "https://login.globex.example", clientId: "wharf", clientSecret: "s3cret" },
    });
    const mapping = await wharf.create(`/iam/v2/externalGroupRoleMappings/${idp}`, {
      externalGroupId: "pullers",
      roleUid: builtInRoleUid("registry.pull"),
    });
    const withSessionGrants = await createIssuer({
      store: wharf.store,
      issuerUrl: wharf.apiUrl,
      clock: { now: () => Date.now() },
    }).mint({ subject: puller, audience: wharf.apiUrl, ttlSeconds: 600, extraClaims: { egm: [mapping] } });
    // The grant is real on the API: the session sees globex's repository there.
    const repos = await expectJson<{ repos?: { name: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${globex}`, { token: withSessionGrants }),
    );
    assert.deepEqual(
      repos.repos?.map((r) => r.name),
      ["app"],
    );

    const direct = await issued(ALL_SCOPES, `Bearer ${withSessionGrants}`);
    assert.deepEqual(direct.claims.access, [{ type: "repository", name: "acme/app", actions: ["pull"] }]);
    assert.deepEqual(
      direct.claims.access,
      (await viaStsExchange(ALL_SCOPES, withSessionGrants)).claims.access,
    );
    assert.equal((direct.claims as unknown as Record<string, unknown>).egm, undefined);
  });

  it("refuses an expired API token, a token of another issuer, and a Wharf token of a foreign audience", async () => {
    const expired = await createIssuer({
      store: wharf.store,
      issuerUrl: wharf.apiUrl,
      clock: { now: () => Date.now() - 2 * 3600_000 },
    }).mint({ subject: puller, audience: wharf.apiUrl, ttlSeconds: 60 });
    const expiredRes = await tokenEndpoint(ALL_SCOPES, `Bearer ${expired}`);
    assert.equal(expiredRes.status, 401);
    assert.equal((await ociErrorOf(expiredRes)).code, "UNAUTHORIZED");

    const { privateKey } = await generateKeyPair("ES256");
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: "ES256", kid: "not-wharfs" })
      .setIssuer(wharf.apiUrl)
      .setSubject(ADMIN_IDENTITY_UID)
      .setAudience(wharf.apiUrl)
      .setIssuedAt()
      .setExpirationTime("10m")
      .sign(privateKey);
    const forgedRes = await tokenEndpoint(ALL_SCOPES, `Bearer ${forged}`);
    assert.equal(forgedRes.status, 401);
    assert.equal((await ociErrorOf(forgedRes)).code, "UNAUTHORIZED");

    const elsewhere = await createIssuer({
      store: wharf.store,
      issuerUrl: wharf.apiUrl,
      clock: { now: () => Date.now() },
    }).mint({
      subject: ADMIN_IDENTITY_UID,
      audience: "https://elsewhere.example.com",
      ttlSeconds: 600,
    });
    const elsewhereRes = await tokenEndpoint(ALL_SCOPES, `Bearer ${elsewhere}`);
    assert.equal(elsewhereRes.status, 403);
    assert.equal((await ociErrorOf(elsewhereRes)).code, "DENIED");
  });

  it("takes the API token only as Bearer at /token: Basic (docker login) and registry requests still refuse it", async () => {
    const basic = `Basic ${Buffer.from(`_token:${pullerApi}`).toString("base64")}`;
    const asBasic = await tokenEndpoint(ALL_SCOPES, basic);
    assert.equal(asBasic.status, 403);
    assert.equal((await ociErrorOf(asBasic)).code, "DENIED");

    const direct = await manifestOf("acme/app", pullerApi);
    assert.equal(direct.status, 403);
    assert.equal((await ociErrorOf(direct)).code, "DENIED");

    // The registry-audience credentials of before still work, Basic included.
    const registryAudience = await wharf.registryToken(puller);
    const viaBasic = await issued(
      ["repository:acme/app:pull"],
      `Basic ${Buffer.from(`_token:${registryAudience}`).toString("base64")}`,
    );
    assert.deepEqual(viaBasic.claims.access, [{ type: "repository", name: "acme/app", actions: ["pull"] }]);
  });

  it("the SDK's registry token and tag history cost one request to /token and none to the STS", async () => {
    const requests: string[] = [];
    const client = createWharfClient({
      apiUrl: wharf.apiUrl,
      registryUrl: wharf.registryUrl,
      tokenSource: staticToken(pullerApi),
      fetch: (input, init) => {
        requests.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
        return fetch(input, init);
      },
    });
    const history = [];
    for await (const record of client.tagHistory("acme/app", "latest")) history.push(record);
    assert.equal(history.length, 1);
    assert.deepEqual(requests, ["/token", "/v2/acme/app/_service/history/latest"]);
  });
});
