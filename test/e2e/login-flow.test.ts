import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { decodeJwt } from "jose";
import { BUILT_IN_ROLE_UIDS } from "../../src/authz/built-in-roles.js";
import { currentToken, login, logout } from "../../src/cli/client/auth-login.js";
import { newChildUid } from "../../src/core/uidp.js";
import { registeredIdentityUid } from "../../src/iam/registered-identity.js";
import { SESSION_GRANTS_CLAIM } from "../../src/login/session-grants.js";
import { loadCredentials } from "../../src/sdk/node/stored-credentials.js";
import { expectJson } from "../support/api-assertions.js";
import { type OidcPeer, startOidcPeer } from "../support/oidc-peer.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const run = promisify(execFile);
const WHARF = new URL("../../bin/wharf.js", import.meta.url).pathname;

const ACCOUNTS = {
  alice: { email: "Alice@Example.com", email_verified: true, name: "Alice", groups: ["dev", "ops"] },
  bob: { email: "bob@example.com", email_verified: false, name: "Bob", groups: ["nobody"] },
};

/** Runs `wharf auth login`'s code path, playing the browser: Wharf → provider → Wharf → CLI. */
async function browserLogin(
  server: TestServer,
  peer: OidcPeer,
  opts: { identityProvider?: string; account: string },
): Promise<string> {
  let printed = "";
  const done = login({
    apiUrl: server.apiUrl,
    identityProvider: opts.identityProvider ?? "",
    audience: "",
    loginHint: opts.account,
    browser: false,
    print: (line) => {
      printed += `${line}\n`;
    },
    timeoutMs: 20_000,
  });
  const start = await waitFor(() => /(http:\/\/\S+\/oauth\?\S+)/.exec(printed)?.[1]);
  const toProvider = await fetch(start, { redirect: "manual" });
  assert.equal(
    toProvider.status,
    302,
    `/oauth redirects to the provider: ${await toProvider.clone().text()}`,
  );
  const callback = await peer.followAuthorization(String(toProvider.headers.get("location")));
  assert.equal(callback.pathname, "/oauth/callback", "the provider sends the browser back to Wharf");
  const toCli = await fetch(callback, { redirect: "manual" });
  assert.equal(toCli.status, 302, "Wharf sends the browser on to the CLI");
  const cli = await fetch(String(toCli.headers.get("location")));
  assert.equal(cli.status, 200, `the CLI accepts the code: ${await cli.text()}`);
  return done;
}

async function waitFor<T>(read: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = read();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("browser login through an organization's identity provider", () => {
  let server: TestServer;
  let peer: OidcPeer;
  let configDir: string;
  let org: string;
  let idp: string;
  let opsMapping: string;
  /** Added to the server's clock (only ever increased): lets a test age its caches without waiting. */
  let clockSkewMs = 0;

  before(async () => {
    configDir = await mkdtemp(join(tmpdir(), "wharf-cli-"));
    process.env.WHARF_CONFIG_DIR = configDir;
    server = await startTestServer({ clock: { now: () => Date.now() + clockSkewMs } });
    peer = await startOidcPeer({
      clients: [{ clientId: "wharf", redirectUris: [`${server.apiUrl}/oauth/callback`] }],
      accounts: ACCOUNTS,
    });
    org = await server.create("/iam/v2/groups", { name: "acme" });
    idp = newChildUid(org);
    const now = Date.now();
    await server.store.identityProviders.insert({
      uid: idp,
      groupUid: org,
      name: "acme-sso",
      description: "",
      defaultRole: BUILT_IN_ROLE_UIDS.viewer,
      oidc: {
        issuer: peer.issuer,
        clientId: "wharf",
        clientSecret: "secret-wharf",
        additionalScopes: ["groups"],
        groupsClaim: "groups",
        correlationRule: 0,
        pkceEnabled: false,
      },
      createTime: now,
      updateTime: now,
    });
    opsMapping = newChildUid(idp);
    await server.store.externalGroupRoleMappings.insert({
      uid: opsMapping,
      identityProviderUid: idp,
      externalGroupId: "ops",
      roleUid: BUILT_IN_ROLE_UIDS.editor,
      scope: org,
      createTime: now,
    });
  });

  after(async () => {
    delete process.env.WHARF_CONFIG_DIR;
    await peer?.close();
    await server?.close();
    await rm(configDir, { recursive: true, force: true });
  });

  it("registers the person on first login with the default role and session-scoped group grants", async () => {
    const uid = await browserLogin(server, peer, { identityProvider: idp, account: "alice" });
    assert.equal(uid, registeredIdentityUid(peer.issuer, "alice"), "deterministic uid of issuer|subject");

    const identity = await expectJson<{ name: string; email: string; lastSeenTime?: string }>(
      await server.api(`/iam/v2/identities/${uid}`, { token: server.adminToken }),
    );
    assert.equal(identity.name, "alice", "named after the provider's name claim");
    assert.equal(identity.email, "alice@example.com", "the verified email, lowercased");
    assert.ok(identity.lastSeenTime, "lastSeenTime is set by the login");

    const bindings = await expectJson<{ roleBindings: { roleUid: string; uid: string }[] }>(
      await server.api(`/iam/v2/roleBindings?identity=${uid}`, { token: server.adminToken }),
    );
    assert.deepEqual(
      bindings.roleBindings.map((b) => b.roleUid),
      [BUILT_IN_ROLE_UIDS.viewer],
      "the provider's default role is bound; group mappings are not role bindings",
    );

    const stored = await loadCredentials(server.apiUrl);
    assert.ok(stored, "the CLI stored the tokens");
    assert.equal(stored.refreshToken, undefined, "a group-derived session gets no refresh token");
    const claims = decodeJwt(stored.token);
    assert.deepEqual(claims[SESSION_GRANTS_CLAIM], [opsMapping], "the ops mapping applies to this session");
    assert.ok((claims.exp ?? 0) - (claims.iat ?? 0) <= 3600, "the token lasts at most an hour");
    assert.deepEqual(claims.act, { iss: peer.issuer, sub: "alice", aud: "wharf" }, "act names the upstream");
    const mode = (await stat(join(configDir, "credentials.json"))).mode & 0o777;
    assert.equal(mode, 0o600, "the credentials file is private");

    const viewed = await server.api(`/iam/v2/groups/${org}`, { token: stored.token });
    assert.equal(viewed.status, 200, "the default role lets her read the org");
    const repo = await server.api(`/registry/v2/repos/${org}`, {
      method: "POST",
      token: stored.token,
      body: { name: "from-group-grant" },
    });
    assert.equal(
      repo.status,
      200,
      `the ops → editor mapping lets her create repos: ${await repo.clone().text()}`,
    );

    await server.store.externalGroupRoleMappings.delete(opsMapping);
    clockSkewMs += 1200; // past the 1 s the server trusts its cached grants (measured on its clock)
    const denied = await server.api(`/registry/v2/repos/${org}`, {
      method: "POST",
      token: stored.token,
      body: { name: "after-mapping-deleted" },
    });
    assert.equal(denied.status, 403, "a deleted mapping stops granting within seconds, mid-session");
  });

  it("a second login registers nobody new and binds nothing twice", async () => {
    const uid = await browserLogin(server, peer, { identityProvider: idp, account: "alice" });
    const bindings = await expectJson<{ roleBindings: unknown[] }>(
      await server.api(`/iam/v2/roleBindings?identity=${uid}`, { token: server.adminToken }),
    );
    assert.equal(bindings.roleBindings.length, 1, "still one binding");
    assert.equal(await currentToken(server.apiUrl), (await loadCredentials(server.apiUrl))?.token);
  });

  it("an unverified email is not recorded; without mapped groups the session may be refreshed", async () => {
    const uid = await browserLogin(server, peer, { identityProvider: idp, account: "bob" });
    assert.equal(uid, registeredIdentityUid(peer.issuer, "bob"), "bob logged in, not alice");
    const identity = await expectJson<{ email?: string }>(
      await server.api(`/iam/v2/identities/${uid}`, { token: server.adminToken }),
    );
    assert.equal(identity.email ?? "", "", 'an unverified email is not trusted (proto3 JSON omits "")');
    const first = await loadCredentials(server.apiUrl);
    const claims = decodeJwt(first?.token ?? "");
    assert.equal(claims[SESSION_GRANTS_CLAIM], undefined, "no group grants");
    assert.match(first?.refreshToken ?? "", /^wrt_/, "a plain login session gets a refresh token");

    // `wharf auth token` an hour later: the stored token is stale, so it rotates the refresh token.
    const refreshed = await currentToken(server.apiUrl, Date.now() + 2 * 3600_000);
    assert.notEqual(refreshed, first?.token, "a new access token");
    assert.equal(decodeJwt(refreshed).sub, uid, "for the same person");
    const second = await loadCredentials(server.apiUrl);
    assert.ok(
      second?.refreshToken && second.refreshToken !== first?.refreshToken,
      "the refresh token rotated",
    );
    const me = await server.api(`/iam/v2/identities/${uid}`, { token: refreshed });
    assert.notEqual(me.status, 401, "the refreshed token authenticates");
    assert.equal(await logout(server.apiUrl), true, "logout forgets the tokens");
    assert.equal(await loadCredentials(server.apiUrl), undefined);
    assert.doesNotMatch(await readFile(join(configDir, "credentials.json"), "utf8"), /eyJ/, "no token left");
    await assert.rejects(currentToken(server.apiUrl), /not logged in/, "auth token after logout fails");
  });

  it("exchanges a person's ID token of the provider at /sts/exchange?identity_provider=", async () => {
    const devMapping = newChildUid(idp);
    await server.store.externalGroupRoleMappings.insert({
      uid: devMapping,
      identityProviderUid: idp,
      externalGroupId: "dev",
      roleUid: BUILT_IN_ROLE_UIDS.editor,
      scope: org,
      createTime: Date.now(),
    });
    const exchange = (token: string, params: Record<string, string>) =>
      fetch(`${server.apiUrl}/sts/exchange?${new URLSearchParams(params)}`, {
        headers: { authorization: `Bearer ${token}` },
      });
    const { id_token } = await peer.login({ accountId: "alice", clientId: "wharf" });
    const ok = await expectJson<{ token: string; refreshToken?: string }>(
      await exchange(id_token, { identity_provider: idp, create_refresh_token: "true" }),
    );
    const claims = decodeJwt(ok.token);
    assert.equal(claims.sub, registeredIdentityUid(peer.issuer, "alice"), "the registered person");
    assert.deepEqual(claims[SESSION_GRANTS_CLAIM], [devMapping], "with this session's group grants");
    assert.equal(ok.refreshToken, undefined, "and no refresh token for a group-derived session");
    const repo = await server.api(`/registry/v2/repos/${org}`, {
      method: "POST",
      token: ok.token,
      body: { name: "via-sts-person-exchange" },
    });
    assert.equal(repo.status, 200, "the dev → editor mapping applies");

    const bob = await peer.login({ accountId: "bob", clientId: "wharf" });
    const bobs = await expectJson<{ token: string; refreshToken?: string }>(
      await exchange(bob.id_token, { identity_provider: idp, create_refresh_token: "true" }),
    );
    assert.match(bobs.refreshToken ?? "", /^wrt_/, "a session without group grants may be refreshed");

    const stranger = await startOidcPeer({ clients: [{ clientId: "wharf" }], accounts: ACCOUNTS });
    try {
      const forged = await stranger.login({ accountId: "alice", clientId: "wharf" });
      const refused = await exchange(forged.id_token, { identity_provider: idp });
      assert.equal(refused.status, 403, "an ID token of another issuer is refused");
    } finally {
      await stranger.close();
    }
    const wrongAud = await exchange(ok.token, { identity_provider: idp });
    assert.equal(wrongAud.status, 403, "a Wharf token is not an ID token of the provider");
    assert.equal(
      (await exchange(id_token, { identity_provider: newChildUid(org) })).status,
      404,
      "an unknown provider",
    );
    assert.equal(
      (await exchange(id_token, { identity_provider: "default" })).status,
      400,
      "no default provider on this server",
    );
  });

  it("the real `wharf auth login|token|logout` commands", async () => {
    const env = { ...process.env, WHARF_CONFIG_DIR: configDir, WHARF_API_URL: server.apiUrl };
    const cli = spawn(
      process.execPath,
      [WHARF, "auth", "login", "--identity-provider", idp, "--no-browser"],
      {
        env,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    cli.stderr.on("data", (c: Buffer) => {
      stderr += c.toString();
    });
    const exited = new Promise<number | null>((resolve) => cli.once("exit", resolve));
    const start = await waitFor(() => /(http:\/\/\S+\/oauth\?\S+)/.exec(stderr)?.[1], 20_000);
    const toProvider = await fetch(`${start}&login_hint=bob`, { redirect: "manual" });
    const callback = await peer.followAuthorization(String(toProvider.headers.get("location")));
    const toCli = await fetch(callback, { redirect: "manual" });
    await (await fetch(String(toCli.headers.get("location")))).text();
    assert.equal(await exited, 0, `wharf auth login exits 0: ${stderr}`);
    assert.match(stderr, new RegExp(`Logged in to .* as ${registeredIdentityUid(peer.issuer, "bob")}`));

    const token = await run(process.execPath, [WHARF, "auth", "token"], { env });
    assert.equal(
      token.stdout.trim(),
      (await loadCredentials(server.apiUrl))?.token,
      "prints the stored token",
    );
    const out = await run(process.execPath, [WHARF, "auth", "logout"], { env });
    assert.match(out.stderr, /Logged out/);
    await assert.rejects(
      run(process.execPath, [WHARF, "auth", "token"], { env }),
      (err: { code?: number; stderr?: string }) => err.code === 1 && /not logged in/.test(err.stderr ?? ""),
      "auth token without a login exits 1 and says why",
    );
  });

  it("refuses bad login requests with clear errors", async () => {
    const challenge = createHash("sha256").update("v".repeat(43)).digest("base64url");
    const start = (params: Record<string, string>) =>
      fetch(`${server.apiUrl}/oauth?${new URLSearchParams(params)}`, { redirect: "manual" });
    const base = {
      redirect: "http://127.0.0.1:9/callback",
      code_challenge: challenge,
      identity_provider: idp,
    };

    const foreign = await start({ ...base, redirect: "https://evil.example/callback" });
    assert.equal(foreign.status, 400, "a non-loopback redirect is refused");
    assert.match(await foreign.text(), /redirect/);
    assert.equal((await start({ ...base, code_challenge: "short" })).status, 400, "a bad challenge");
    assert.equal((await start({ ...base, code_challenge_method: "plain" })).status, 400, "plain PKCE");
    assert.equal(
      (await start({ ...base, audience: "https://other.example" })).status,
      400,
      "a foreign audience",
    );
    assert.equal((await start({ ...base, identity_provider: newChildUid(org) })).status, 404, "unknown IdP");
    const noDefault = await start({ ...base, identity_provider: "" });
    assert.equal(noDefault.status, 400, "no default provider configured → FAILED_PRECONDITION");

    const unknownState = await fetch(`${server.apiUrl}/oauth/callback?state=nope&code=x`, {
      redirect: "manual",
    });
    assert.equal(unknownState.status, 400, "an unknown state is refused");

    // A real pending login, then a forged code: the provider refuses it and the CLI hears why.
    const toProvider = await start(base);
    const state = new URL(String(toProvider.headers.get("location"))).searchParams.get("state") ?? "";
    const forged = await fetch(`${server.apiUrl}/oauth/callback?state=${state}&code=forged`, {
      redirect: "manual",
    });
    assert.equal(forged.status, 302, "the browser goes back to the CLI");
    const back = new URL(String(forged.headers.get("location")));
    assert.equal(back.searchParams.get("error"), "login_failed");
    assert.match(back.searchParams.get("error_description") ?? "", /refused the authorization code/);
    const replay = await fetch(`${server.apiUrl}/oauth/callback?state=${state}&code=forged`, {
      redirect: "manual",
    });
    assert.equal(replay.status, 400, "a state is used once");

    const denied = await start(base);
    const deniedState = new URL(String(denied.headers.get("location"))).searchParams.get("state") ?? "";
    const refused = await fetch(`${server.apiUrl}/oauth/callback?state=${deniedState}&error=access_denied`, {
      redirect: "manual",
    });
    assert.equal(new URL(String(refused.headers.get("location"))).searchParams.get("error"), "access_denied");
  });

  it("a login code is redeemed once, and only with its verifier", async () => {
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    const params = new URLSearchParams({
      redirect: "http://127.0.0.1:9/callback",
      code_challenge: challenge,
      identity_provider: idp,
      login_hint: "bob",
    });
    const toProvider = await fetch(`${server.apiUrl}/oauth?${params}`, { redirect: "manual" });
    const callback = await peer.followAuthorization(String(toProvider.headers.get("location")));
    const toCli = await fetch(callback, { redirect: "manual" });
    const code = new URL(String(toCli.headers.get("location"))).searchParams.get("code") ?? "";
    const redeem = (codeVerifier: string) =>
      fetch(`${server.apiUrl}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ code, code_verifier: codeVerifier }),
      });
    const wrong = await redeem(randomBytes(32).toString("base64url"));
    assert.equal(wrong.status, 403, "a wrong verifier is refused");
    const again = await redeem(verifier);
    assert.equal(again.status, 403, "and the code is spent by the failed attempt");
  });
});

describe("browser login through the server's default provider", () => {
  let server: TestServer;
  let peer: OidcPeer;
  let configDir: string;

  before(async () => {
    configDir = await mkdtemp(join(tmpdir(), "wharf-cli-"));
    process.env.WHARF_CONFIG_DIR = configDir;
    const port = await freePort();
    peer = await startOidcPeer({
      clients: [{ clientId: "wharf-default", redirectUris: [`http://127.0.0.1:${port}/oauth/callback`] }],
      accounts: ACCOUNTS,
    });
    server = await startTestServer({
      config: {
        apiAddr: `127.0.0.1:${port}`,
        loginIssuer: peer.issuer,
        loginClientId: "wharf-default",
        loginClientSecret: "secret-wharf-default",
      },
    });
  });

  after(async () => {
    delete process.env.WHARF_CONFIG_DIR;
    await peer?.close();
    await server?.close();
    await rm(configDir, { recursive: true, force: true });
  });

  it("registers a root identity with no roles, who can then create an organization", async () => {
    const uid = await browserLogin(server, peer, { account: "alice" });
    assert.equal(uid, registeredIdentityUid(peer.issuer, "alice"));
    const bindings = await expectJson<{ roleBindings: unknown[] }>(
      await server.api(`/iam/v2/roleBindings?identity=${uid}`, { token: server.adminToken }),
    );
    assert.deepEqual(bindings.roleBindings ?? [], [], "the default provider grants nothing");
    const token = await currentToken(server.apiUrl);
    const created = await server.api("/iam/v2/groups", {
      method: "POST",
      token,
      body: { name: "alices-org" },
    });
    assert.equal(created.status, 200, "any registered person may create an organization");
  });
});
