import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { decodeJwt } from "jose";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { createPullToken } from "../../src/federation/pull-token.js";
import { expectJson } from "../support/api-assertions.js";
import { type BuiltImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const run = promisify(execFile);
const WHARF = new URL("../../bin/wharf.js", import.meta.url).pathname;
const MANIFEST = "application/vnd.oci.image.manifest.v1+json";

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
