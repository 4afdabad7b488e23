import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from "jose";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { createPullToken } from "../../src/federation/pull-token.js";
import { expectJson } from "../support/api-assertions.js";
import { type BuiltImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const run = promisify(execFile);
const WHARF = new URL("../../bin/wharf.js", import.meta.url).pathname;
const MANIFEST = "application/vnd.oci.image.manifest.v1+json";

/** Polls `check` every 100 ms until it returns true; fails with `what` after `ms`. */
async function eventually(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Resolves once the wall clock is past `ms`. */
async function waitUntilPast(ms: number): Promise<void> {
  while (Date.now() <= ms) await new Promise((r) => setTimeout(r, Math.max(1, ms - Date.now() + 1)));
}

describe("pull tokens: static-keys identities as registry Basic credentials", () => {
  let wharf: TestServer;
  let skewMs = 0;
  let acme: string;
  let image: BuiltImage;

  const basic = (user: string, password: string) =>
    `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

  /** GET the manifest of acme/app:latest with Basic credentials sent directly to /v2/. */
  async function pullDirect(user: string, password: string): Promise<number> {
    const res = await wharf.registry("/v2/acme/app/manifests/latest", {
      headers: { authorization: basic(user, password), accept: MANIFEST },
    });
    await res.arrayBuffer();
    return res.status;
  }

  const pullToken = (ttlSeconds = 3600) =>
    createPullToken({
      apiUrl: wharf.apiUrl,
      token: wharf.adminToken,
      parent: acme,
      ttlSeconds,
      now: () => Date.now() + skewMs,
    });

  before(async () => {
    wharf = await startTestServer({ clock: { now: () => Date.now() + skewMs } });
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    image = await pushImage(wharf, "acme/app", "latest", await wharf.registryToken(), "pull-token-image");
  });
  after(() => wharf?.close());

  it("creates an identity with static keys for the registry and a registry.pull binding", async () => {
    const pull = await pullToken();
    assert.equal(pull.registryUrl, wharf.registryUrl);
    const claims = decodeJwt(pull.password);
    assert.equal(claims.aud, wharf.registryUrl);
    const identity = await expectJson<{
      uid: string;
      staticKeys: { audiences: string[]; expirationTime: string; issuerKeys: string };
    }>(await wharf.api(`/iam/v2/identities/${pull.username}`, { token: wharf.adminToken }));
    assert.equal(identity.uid, pull.username);
    assert.deepEqual(identity.staticKeys.audiences, [wharf.registryUrl]);
    assert.equal(Date.parse(identity.staticKeys.expirationTime), (claims.exp ?? 0) * 1000);
    assert.equal(
      JSON.parse(identity.staticKeys.issuerKeys).keys[0].d,
      undefined,
      "no private key registered",
    );
    const bindings = await expectJson<{ roleBindings: { identityUid: string; roleUid: string }[] }>(
      await wharf.api(`/iam/v2/roleBindings?group=${acme}`, { token: wharf.adminToken }),
    );
    assert.ok(
      bindings.roleBindings.some(
        (b) => b.identityUid === pull.username && b.roleUid === builtInRoleUid("registry.pull"),
      ),
      "registry.pull bound at the org",
    );
  });

  it("pulls with <uid>:<jwt> directly on /v2/ and through /token; cannot push", async () => {
    const pull = await pullToken();
    assert.equal(await pullDirect(pull.username, pull.password), 200);
    const issued = await expectJson<{ token: string }>(
      await wharf.registry("/token?scope=repository:acme/app:pull,push", {
        headers: { authorization: basic(pull.username, pull.password) },
      }),
    );
    const claims = decodeJwt(issued.token);
    assert.equal(claims.sub, pull.username);
    assert.deepEqual(claims.access, [{ type: "repository", name: "acme/app", actions: ["pull"] }]);
    const blob = await wharf.registry(`/v2/acme/app/blobs/${image.configDigest}`, { token: issued.token });
    assert.equal(blob.status, 200);
    await blob.arrayBuffer();
    // A wrong password, or another identity's uid with this JWT, is refused.
    assert.equal(await pullDirect(pull.username, `${pull.password.slice(0, -4)}AAAA`), 401);
    const other = await pullToken();
    assert.equal(await pullDirect(other.username, pull.password), 401);
  });

  it("stops working once expired (JWT and identity), and once its identity is deleted", async () => {
    const pull = await pullToken(600);
    assert.equal(await pullDirect(pull.username, pull.password), 200);
    skewMs = 601_000 + 30_000;
    try {
      assert.equal(await pullDirect(pull.username, pull.password), 401, "expired");
    } finally {
      skewMs = 0;
    }
    // The identity's expiration alone: shorten it, keep the JWT valid.
    const long = await pullToken(7200);
    const identity = await expectJson<{ staticKeys: Record<string, unknown> }>(
      await wharf.api(`/iam/v2/identities/${long.username}`, { token: wharf.adminToken }),
    );
    const soon = new Date(Date.now() + 120_000).toISOString();
    await expectJson(
      await wharf.api(`/iam/v2/identities/${long.username}?update_mask=static_keys`, {
        method: "PATCH",
        token: wharf.adminToken,
        body: { uid: long.username, staticKeys: { ...identity.staticKeys, expirationTime: soon } },
      }),
    );
    assert.equal(await pullDirect(long.username, long.password), 200);
    skewMs = 150_000;
    try {
      assert.equal(await pullDirect(long.username, long.password), 401, "identity expired");
    } finally {
      skewMs = 0;
    }
    // Deleting the identity (through the API, binding first) revokes it.
    const gone = await pullToken();
    assert.equal(await pullDirect(gone.username, gone.password), 200);
    const bindings = await expectJson<{ roleBindings: { uid: string; identityUid: string }[] }>(
      await wharf.api(`/iam/v2/roleBindings?group=${acme}`, { token: wharf.adminToken }),
    );
    for (const b of bindings.roleBindings.filter((x) => x.identityUid === gone.username)) {
      await expectJson(
        await wharf.api(`/iam/v2/roleBindings/${b.uid}`, { method: "DELETE", token: wharf.adminToken }),
      );
    }
    await expectJson(
      await wharf.api(`/iam/v2/identities/${gone.username}`, { method: "DELETE", token: wharf.adminToken }),
    );
    assert.equal(await pullDirect(gone.username, gone.password), 401, "deleted identity");
  });

  it("wharf admin tokens revoke --subject <identity uid>: refused within seconds; a JWT minted afterwards works", async () => {
    /** /token with Basic credentials: the status and the body (the issued token, or the error). */
    const viaToken = async (user: string, password: string) => {
      const res = await wharf.registry("/token?scope=repository:acme/app:pull", {
        headers: { authorization: basic(user, password) },
      });
      return { status: res.status, body: await res.text() };
    };
    const pull = await pullToken();
    const bystander = await pullToken();
    assert.equal(await pullDirect(pull.username, pull.password), 200, "works before the revocation");
    const issued = await viaToken(pull.username, pull.password);
    assert.equal(issued.status, 200, issued.body);
    const manifest = await wharf.registry("/v2/acme/app/manifests/latest", {
      token: (JSON.parse(issued.body) as { token: string }).token,
      headers: { accept: MANIFEST },
    });
    assert.equal(manifest.status, 200);
    await manifest.arrayBuffer();

    // A key of the test's own, registered beside the pull token's, so more JWTs of this very
    // identity (same iss/sub) can be signed: one before the revocation, one after.
    const own = await generateKeyPair("ES256");
    const identity = await expectJson<{ staticKeys: { issuerKeys: string } & Record<string, unknown> }>(
      await wharf.api(`/iam/v2/identities/${pull.username}`, { token: wharf.adminToken }),
    );
    const keys = (JSON.parse(identity.staticKeys.issuerKeys) as { keys: unknown[] }).keys;
    const ownJwk = { ...(await exportJWK(own.publicKey)), kid: "test-own-key", alg: "ES256", use: "sig" };
    await expectJson(
      await wharf.api(`/iam/v2/identities/${pull.username}?update_mask=static_keys`, {
        method: "PATCH",
        token: wharf.adminToken,
        body: {
          uid: pull.username,
          staticKeys: { ...identity.staticKeys, issuerKeys: JSON.stringify({ keys: [...keys, ownJwk] }) },
        },
      }),
    );
    const claims = decodeJwt(pull.password);
    const mint = (iatSeconds: number) =>
      new SignJWT({})
        .setProtectedHeader({ alg: "ES256", kid: ownJwk.kid, typ: "JWT" })
        .setIssuer(claims.iss ?? "")
        .setSubject(claims.sub ?? "")
        .setAudience(wharf.registryUrl)
        .setIssuedAt(iatSeconds)
        .setExpirationTime(iatSeconds + 3600)
        .sign(own.privateKey);
    const earlier = await mint(Math.floor(Date.now() / 1000));
    assert.equal(await pullDirect(pull.username, earlier), 200, "the test's own JWT works before");

    const { stdout } = await run(process.execPath, [
      WHARF,
      "admin",
      "tokens",
      "revoke",
      "--subject",
      pull.username,
      "--data-dir",
      wharf.dataDir,
    ]);
    const cutoff = Date.parse(/issued before (\S+);/.exec(stdout)?.[1] ?? "");
    assert.ok(cutoff > (claims.iat ?? 0) * 1000, stdout);
    await eventually("the registry refuses the revoked pull token on /v2/", async () => {
      return (await pullDirect(pull.username, pull.password)) === 401;
    });
    const refused = await viaToken(pull.username, pull.password);
    assert.equal(refused.status, 401, "and on /token");
    assert.match(refused.body, /token has been revoked/);
    assert.equal(await pullDirect(pull.username, earlier), 401, "every JWT of the identity issued before");
    assert.equal(await pullDirect(bystander.username, bystander.password), 200, "another identity's works");

    // The identity is not gone: a JWT issued after the cutoff is accepted (directly and by /token).
    await waitUntilPast(cutoff);
    const iat = Math.floor(Date.now() / 1000);
    assert.ok(iat * 1000 >= cutoff);
    const later = await mint(iat);
    assert.equal(await pullDirect(pull.username, later), 200, "a JWT minted after the revocation works");
    const reissued = await viaToken(pull.username, later);
    assert.equal(reissued.status, 200, reissued.body);
  });

  it("the CLI: wharf auth pull-token create prints working credentials, and revoke revokes them", async () => {
    const { stdout } = await run(
      process.execPath,
      [
        WHARF,
        "auth",
        "pull-token",
        "create",
        "--parent",
        acme,
        "--ttl",
        "2h",
        "--name",
        "ci-pull",
        "--api-url",
        wharf.apiUrl,
      ],
      { env: { ...process.env, WHARF_TOKEN: wharf.adminToken } },
    );
    const username = /^username: (\S+)$/m.exec(stdout)?.[1] ?? "";
    const password = /^password: (\S+)$/m.exec(stdout)?.[1] ?? "";
    assert.match(stdout, /docker login/);
    assert.equal(await pullDirect(username, password), 200);
    const claims = decodeJwt(password);
    assert.ok(Math.abs((claims.exp ?? 0) - Date.now() / 1000 - 7200) < 60, "ttl 2h");
    const named = await expectJson<{ name: string }>(
      await wharf.api(`/iam/v2/identities/${username}`, { token: wharf.adminToken }),
    );
    assert.equal(named.name, "ci-pull");
    assert.match(stdout, new RegExp(`wharf auth pull-token revoke --identity ${username}`), "how to revoke");

    // An extra binding elsewhere: revoke deletes every binding of the identity, then the identity.
    const team = await wharf.create(`/iam/v2/groups/${acme}`, { name: "team" });
    await wharf.create(`/iam/v2/roleBindings/${team}`, {
      identityUid: username,
      roleUid: builtInRoleUid("registry.pull"),
    });
    const revoked = await run(
      process.execPath,
      [WHARF, "auth", "pull-token", "revoke", "--identity", username, "--api-url", wharf.apiUrl],
      { env: { ...process.env, WHARF_TOKEN: wharf.adminToken } },
    );
    assert.match(revoked.stdout, /identity \S+ deleted, after its 2 role bindings/);
    assert.equal(await pullDirect(username, password), 401, "revoked");
    const left = await expectJson<{ roleBindings?: unknown[] }>(
      await wharf.api(`/iam/v2/roleBindings?identity=${username}`, { token: wharf.adminToken }),
    );
    assert.deepEqual(left.roleBindings ?? [], [], "no binding left behind");
    assert.equal(
      (await wharf.api(`/iam/v2/identities/${username}`, { token: wharf.adminToken })).status,
      404,
      "identity gone",
    );
    await assert.rejects(
      run(process.execPath, [WHARF, "auth", "pull-token", "revoke", "--identity", username], {
        env: { ...process.env, WHARF_TOKEN: wharf.adminToken, WHARF_API_URL: wharf.apiUrl },
      }),
      (err: { code?: number; stderr?: string }) => {
        assert.equal(err.code, 1, "an unknown identity fails");
        assert.match(err.stderr ?? "", /HTTP 404/);
        return true;
      },
    );
    await assert.rejects(
      run(process.execPath, [WHARF, "auth", "pull-token", "create", "--parent", acme, "--ttl", "9000h"], {
        env: { ...process.env, WHARF_TOKEN: wharf.adminToken, WHARF_API_URL: wharf.apiUrl },
      }),
      (err: { code?: number; stderr?: string }) => {
        assert.equal(err.code, 2, "usage error");
        assert.match(err.stderr ?? "", /8760h/);
        return true;
      },
    );
  });
});
