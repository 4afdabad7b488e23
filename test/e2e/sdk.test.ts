import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { decodeJwt } from "jose";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { newChildUid } from "../../src/core/uidp.js";
import {
  Code,
  connectWebTransport,
  createWharfClient,
  exchangeToken,
  grpcWebTransport,
  listAll,
  pages,
  staticToken,
  stsExchange,
  type TransportFactory,
  WharfApiError,
} from "../../src/sdk/index.js";
import { loadCredentials, nodeTransport, saveCredentials, storedLogin } from "../../src/sdk/node/index.js";
import { type OidcPeer, startOidcPeer } from "../support/oidc-peer.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** The call's rejection, asserted to be the SDK's one error class. */
async function failure(call: Promise<unknown>): Promise<WharfApiError> {
  const err = await call.then(
    () => assert.fail("the call succeeded"),
    (e: unknown) => e,
  );
  assert.ok(err instanceof WharfApiError, `a WharfApiError, got ${String(err)}`);
  return err;
}

const TRANSPORTS: [string, TransportFactory][] = [
  ["Connect JSON over fetch (connect-web, the default)", connectWebTransport()],
  ["Connect binary over fetch (connect-web)", connectWebTransport({ useBinaryFormat: true })],
  ["gRPC-Web over fetch (connect-web)", grpcWebTransport()],
  ["Connect over HTTP/1.1 (connect-node)", nodeTransport()],
  ["Connect over h2c (connect-node)", nodeTransport({ httpVersion: "2", useBinaryFormat: true })],
  ["gRPC over h2c (connect-node)", nodeTransport({ protocol: "grpc" })],
];

describe("the SDK against a real server", () => {
  let wharf: TestServer;

  before(async () => {
    wharf = await startTestServer();
  });
  after(() => wharf.close());

  TRANSPORTS.forEach(([name, transport], i) => {
    it(`creates, pages through and fails with typed details: ${name}`, async () => {
      const client = createWharfClient({
        apiUrl: wharf.apiUrl,
        tokenSource: staticToken(wharf.adminToken),
        transport,
      });
      assert.equal((await client.ping.ping({})).$typeName, "platform.ping.v2.PingResponse");
      const org = await client.iam.groups.createGroup({ group: { name: `sdk-org-${i}` } });
      for (const n of [1, 2, 3, 4, 5]) {
        await client.registry.repos.createRepo({ parent: org.uid, repo: { name: `app${n}` } });
      }
      const request = { uidp: { childrenOf: org.uid }, pageSize: 2, orderBy: "name" };
      const sizes: number[] = [];
      for await (const page of pages(client.registry.repos.listRepos, request)) sizes.push(page.repos.length);
      assert.deepEqual(sizes, [2, 2, 1], "three pages of at most 2");
      const names: string[] = [];
      for await (const repo of listAll(client.registry.repos.listRepos, request)) names.push(repo.name);
      assert.deepEqual(names, ["app1", "app2", "app3", "app4", "app5"]);

      const invalid = await failure(
        client.registry.repos.createRepo({ parent: org.uid, repo: { name: "Not A Name" } }),
      );
      assert.equal(invalid.code, Code.InvalidArgument);
      assert.equal(invalid.codeName, "INVALID_ARGUMENT");
      assert.deepEqual(
        invalid.fieldViolations.map((v) => v.field),
        ["name"],
      );
      assert.match(invalid.fieldViolations[0]?.description ?? "", /./);
      assert.equal(invalid.errorInfo?.reason, "INVALID_ARGUMENT");
      assert.equal(invalid.errorInfo?.domain, "registry.wharf.dev");
      assert.doesNotMatch(invalid.message, /^\[/, "the server's message, without connect's [code] prefix");

      const missing = `${org.uid}/0123456789abcdef`;
      const notFound = await failure(client.registry.repos.getRepo({ uid: missing }));
      assert.equal(notFound.code, Code.NotFound);
      assert.equal(notFound.resourceInfo?.resourceName, missing);

      const notEmpty = await failure(client.iam.groups.deleteGroup({ uid: org.uid }));
      assert.equal(notEmpty.code, Code.FailedPrecondition);
      assert.deepEqual(
        notEmpty.preconditionViolations.map((v) => [v.type, v.subject]),
        [["RESOURCE_NOT_EMPTY", org.uid]],
      );

      const anonymous = createWharfClient({ apiUrl: wharf.apiUrl, transport });
      const unauthenticated = await failure(anonymous.iam.groups.getGroup({ uid: org.uid }));
      assert.equal(unauthenticated.code, Code.Unauthenticated);
    });
  });

  it("a call to a server that is not there is UNAVAILABLE, as the same error class", async () => {
    const client = createWharfClient({ apiUrl: "http://127.0.0.1:9", tokenSource: staticToken("t") });
    const err = await failure(client.ping.ping({}));
    assert.equal(err.code, Code.Unavailable);
  });
});

describe("the SDK's registry helpers", () => {
  let wharf: TestServer;
  let acme: string;
  let repoUid: string;
  const v1 = buildImage("sdk-v1");
  const v2 = buildImage("sdk-v2");

  before(async () => {
    wharf = await startTestServer();
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    const pushToken = await wharf.registryToken();
    await pushImage(wharf, "acme/app", "v1", pushToken, v1);
    await pushImage(wharf, "acme/app", "latest", pushToken, v2);
    const admin = createWharfClient({ apiUrl: wharf.apiUrl, tokenSource: staticToken(wharf.adminToken) });
    const { repos } = await admin.registry.repos.listRepos({ uidp: { childrenOf: acme }, name: "app" });
    repoUid = repos[0]?.uid as string;
  });
  after(() => wharf.close());

  it("registryToken grants what the caller may do, learning the registry URL from the server", async () => {
    const client = createWharfClient({ apiUrl: wharf.apiUrl, tokenSource: staticToken(wharf.adminToken) });
    assert.equal(await client.registryUrl(), wharf.registryUrl);
    const token = await client.registryToken("repository:acme/app:pull,push");
    const claims = decodeJwt(token);
    assert.equal(claims.aud, wharf.registryUrl);
    assert.deepEqual(claims.access, [{ type: "repository", name: "acme/app", actions: ["pull", "push"] }]);

    const anonymous = createWharfClient({ apiUrl: wharf.apiUrl, registryUrl: wharf.registryUrl });
    const none = decodeJwt(await anonymous.registryToken("repository:acme/app:pull"));
    assert.deepEqual(none.access, [], "an anonymous caller gets no access to a private repo");
  });

  it("resolve gives the digest a tag points to; an unknown tag is NOT_FOUND", async () => {
    const client = createWharfClient({ apiUrl: wharf.apiUrl, tokenSource: staticToken(wharf.adminToken) });
    assert.equal(await client.resolve("acme/app:v1"), v1.digest);
    assert.equal(await client.resolve("acme/app"), v2.digest, "no tag means latest");
    assert.equal(await client.resolve(`${new URL(wharf.registryUrl).host}/acme/app:v1`), v1.digest);
    assert.equal(await client.resolve(`acme/app@${v1.digest}`), v1.digest);
    const err = await failure(client.resolve("acme/app:nope"));
    assert.equal(err.code, Code.NotFound);
    assert.equal(err.httpStatus, 404);
  });

  it("tagHistory follows the registry's 1,000-record windows to the end, also inside one millisecond", async () => {
    assert.ok(repoUid, "the push created acme/app");
    const base = Date.UTC(2024, 0, 1);
    const total = 1004;
    // Records 998 to 1001 share one millisecond: the first window ends among them.
    const timeOf = (i: number) => base + (i >= 998 && i <= 1001 ? 998 : i) * 1000;
    for (let i = 0; i < total; i++) {
      await wharf.store.tags.put({
        repoUid,
        name: "bulk",
        digest: i % 2 === 0 ? v1.digest : v2.digest,
        deprecated: false,
        newUid: newChildUid(repoUid),
        now: timeOf(i),
      });
    }
    const client = createWharfClient({ apiUrl: wharf.apiUrl, tokenSource: staticToken(wharf.adminToken) });
    const records = [];
    for await (const record of client.tagHistory("acme/app", "bulk")) records.push(record);
    assert.equal(records.length, total);
    records.forEach((r, i) => {
      assert.equal(r.updateTimestamp, new Date(timeOf(i)).toISOString(), `time of record ${i}`);
      assert.equal(r.digest, i % 2 === 0 ? v1.digest : v2.digest, `digest of record ${i}`);
      assert.equal(r.deleted, false);
    });
    const windowed = [];
    for await (const r of client.tagHistory("acme/app", "bulk", {
      start: new Date(base + 5_000),
      end: new Date(base + 10_000).toISOString(),
    })) {
      windowed.push(r.updateTimestamp);
    }
    assert.deepEqual(
      windowed,
      [5, 6, 7, 8, 9].map((s) => new Date(base + s * 1000).toISOString()),
    );
    const err = await failure(
      (async () => {
        for await (const _ of client.tagHistory("acme/app", "never-there")) assert.fail("no records");
      })(),
    );
    assert.equal(err.code, Code.NotFound);
    assert.equal(err.errorInfo?.reason, "MANIFEST_UNKNOWN");
  });

  it("tagHistory refuses, rather than loops, when more than 1,000 records share one millisecond", async () => {
    for (let i = 0; i < 1001; i++) {
      await wharf.store.tags.put({
        repoUid,
        name: "crowded",
        digest: i % 2 === 0 ? v1.digest : v2.digest,
        deprecated: false,
        newUid: newChildUid(repoUid),
        now: Date.UTC(2024, 0, 1),
      });
    }
    const client = createWharfClient({ apiUrl: wharf.apiUrl, tokenSource: staticToken(wharf.adminToken) });
    let yielded = 0;
    const err = await failure(
      (async () => {
        for await (const _ of client.tagHistory("acme/app", "crowded")) yielded++;
      })(),
    );
    assert.equal(err.code, Code.OutOfRange);
    assert.equal(yielded, 1000, "the first window was given before the refusal");
  });
});

describe("the SDK's token sources", () => {
  let peer: OidcPeer;
  let stranger: OidcPeer;
  let wharf: TestServer;
  let acme: string;
  let globex: string;
  let ci: string;
  let configDir: string;

  before(async () => {
    peer = await startOidcPeer();
    stranger = await startOidcPeer();
    wharf = await startTestServer({ federation: { jwksCooldownMs: 0 } });
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    globex = await wharf.create("/iam/v2/groups", { name: "globex" });
    ci = await wharf.create(`/iam/v2/identities/${acme}`, {
      name: "ci",
      claimMatch: { issuer: peer.issuer, subject: "ci" },
    });
    await wharf.create(`/iam/v2/roleBindings/${acme}`, {
      identityUid: ci,
      roleUid: builtInRoleUid("viewer"),
    });
    configDir = await mkdtemp(join(tmpdir(), "wharf-sdk-"));
  });
  after(async () => {
    await wharf.close();
    await peer.close();
    await stranger.close();
    await rm(configDir, { recursive: true, force: true });
  });

  it("stsExchange turns an external OIDC token into the identity's access, and no more", async () => {
    let asked = 0;
    const client = createWharfClient({
      apiUrl: wharf.apiUrl,
      tokenSource: stsExchange({
        apiUrl: wharf.apiUrl,
        identity: ci,
        externalToken: {
          token: () => {
            asked++;
            return peer.clientCredentialsToken({ audience: wharf.apiUrl });
          },
        },
      }),
    });
    assert.equal((await client.iam.groups.getGroup({ uid: acme })).name, "acme");
    assert.equal((await client.iam.groups.getGroup({ uid: acme })).name, "acme");
    assert.equal(asked, 1, "the exchanged token is reused while valid");
    const denied = await failure(client.iam.groups.getGroup({ uid: globex }));
    assert.equal(denied.code, Code.PermissionDenied, "another organization stays closed");
    const created = await failure(client.registry.repos.createRepo({ parent: acme, repo: { name: "nope" } }));
    assert.equal(created.code, Code.PermissionDenied, "a viewer creates nothing");
    const admin = createWharfClient({ apiUrl: wharf.apiUrl, tokenSource: staticToken(wharf.adminToken) });
    assert.deepEqual(
      (await admin.registry.repos.listRepos({ uidp: { childrenOf: acme } })).repos,
      [],
      "nothing created",
    );

    const impostor = createWharfClient({
      apiUrl: wharf.apiUrl,
      tokenSource: stsExchange({
        apiUrl: wharf.apiUrl,
        identity: ci,
        externalToken: await stranger.clientCredentialsToken({ audience: wharf.apiUrl }),
      }),
    });
    const refused = await failure(impostor.iam.groups.getGroup({ uid: acme }));
    assert.equal(refused.code, Code.PermissionDenied);
    assert.match(refused.message, /verifying token: token does not match identity/);
    assert.equal(refused.httpStatus, 403, "the STS's answer, not the RPC's");
  });

  it("storedLogin refreshes an expired stored login once, saves the new pair, and reuses it", async () => {
    const env = { WHARF_CONFIG_DIR: configDir };
    const issued = await exchangeToken(
      wharf.apiUrl,
      await peer.clientCredentialsToken({ audience: wharf.apiUrl }),
      {
        identity: ci,
        createRefreshToken: true,
      },
    );
    assert.ok(issued.refreshToken, "the STS gave a refresh token");
    await saveCredentials(
      wharf.apiUrl,
      { token: issued.token, expiry: "2020-01-01T00:00:00Z", refreshToken: issued.refreshToken },
      env,
    );
    const client = createWharfClient({
      apiUrl: wharf.apiUrl,
      tokenSource: storedLogin({ apiUrl: wharf.apiUrl, env }),
    });
    // Three calls at once: one refresh (a refresh token spent twice would revoke the login).
    const groups = await Promise.all([1, 2, 3].map(() => client.iam.groups.getGroup({ uid: acme })));
    assert.deepEqual(
      groups.map((g) => g.name),
      ["acme", "acme", "acme"],
    );
    const saved = await loadCredentials(wharf.apiUrl, env);
    assert.ok(
      saved?.refreshToken && saved.refreshToken !== issued.refreshToken,
      "a new refresh token is stored",
    );
    assert.ok(Date.parse(saved.expiry) > Date.now(), "with a fresh expiry");
    assert.notEqual(saved.token, issued.token);
    assert.equal((await stat(join(configDir, "credentials.json"))).mode & 0o777, 0o600);
    await client.iam.groups.getGroup({ uid: acme });
    assert.deepEqual(await loadCredentials(wharf.apiUrl, env), saved, "a valid token is not refreshed again");

    // The spent refresh token again: refused, with what to do.
    await saveCredentials(
      wharf.apiUrl,
      { token: issued.token, expiry: "2020-01-01T00:00:00Z", refreshToken: issued.refreshToken },
      env,
    );
    const stale = createWharfClient({
      apiUrl: wharf.apiUrl,
      tokenSource: storedLogin({ apiUrl: wharf.apiUrl, env }),
    });
    const refused = await failure(stale.iam.groups.getGroup({ uid: acme }));
    assert.equal(refused.code, Code.PermissionDenied);
    assert.match(refused.message, /run `wharf auth login`/);

    const nobody = createWharfClient({
      apiUrl: wharf.apiUrl,
      tokenSource: storedLogin({ apiUrl: wharf.apiUrl, env: { WHARF_CONFIG_DIR: join(configDir, "none") } }),
    });
    const missing = await failure(nobody.ping.ping({}));
    assert.equal(missing.code, Code.Unauthenticated);
    assert.match(missing.message, /not logged in/);
    assert.equal(
      JSON.parse(await readFile(join(configDir, "credentials.json"), "utf8"))[wharf.apiUrl].token,
      issued.token,
    );
  });
});
