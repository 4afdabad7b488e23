import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { decodeJwt } from "jose";
import { createIssuer } from "../../src/auth/issuer.js";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { expectJson } from "../support/api-assertions.js";
import {
  type BuiltImage,
  buildImage,
  ociErrorOf,
  pushBlob,
  pushImage,
  putManifest,
  sha256,
  uploadBlob,
} from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** What `/token` answers. */
interface TokenResponse {
  token: string;
  access_token: string;
  expires_in: number;
  issued_at: string;
}

interface AccessClaim {
  type: string;
  name: string;
  actions: string[];
}

const basic = (token: string) => `Basic ${Buffer.from(`_token:${token}`).toString("base64")}`;

/** The `key="value"` parameters of a `Bearer …` challenge. */
function challengeParams(header: string | null): Record<string, string> {
  assert.ok(header, "WWW-Authenticate header missing");
  assert.match(header, /^Bearer /);
  return Object.fromEntries([...header.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
}

/** Polls `request` every 100 ms until it answers `wanted` or `ms` pass; returns the last status. */
async function statusWithin(ms: number, wanted: number, request: () => Promise<Response>): Promise<number> {
  const deadline = Date.now() + ms;
  let res = await request();
  await res.arrayBuffer();
  while (res.status !== wanted && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    res = await request();
    await res.arrayBuffer();
  }
  return res.status;
}

describe("registry authentication and authorization", () => {
  let wharf: TestServer;
  /** Added to the server's clock (only ever increased): lets a test age tokens without waiting. */
  let clockSkewMs = 0;
  let host: string;
  let adminReg: string;
  let acme: string;
  let appImage: BuiltImage;

  /** GET `/token` with optional credentials (sent as Basic `_token:<token>`) and scopes. */
  async function tokenEndpoint(scopes: string[], credential?: string): Promise<Response> {
    const query = new URLSearchParams({ service: host });
    for (const scope of scopes) query.append("scope", scope);
    return wharf.registry(`/token?${query}`, {
      headers: credential === undefined ? {} : { authorization: basic(credential) },
    });
  }

  async function issued(scopes: string[], credential?: string) {
    const body = await expectJson<TokenResponse>(await tokenEndpoint(scopes, credential));
    return {
      body,
      claims: decodeJwt(body.token) as ReturnType<typeof decodeJwt> & { access: AccessClaim[] },
    };
  }

  const manifestOf = (name: string, ref: string, token?: string) =>
    wharf.registry(`/v2/${name}/manifests/${ref}`, {
      ...(token ? { token } : {}),
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    });

  async function identity(parent: string, name: string): Promise<string> {
    return wharf.create(`/iam/v2/identities/${parent}`, {
      name,
      claimMatch: { issuer: "https://ci.example.com", subject: name },
    });
  }

  async function bind(group: string, identityUid: string, roleUid: string): Promise<string> {
    return wharf.create(`/iam/v2/roleBindings/${group}`, { identityUid, roleUid });
  }

  async function repoNamed(groupUid: string, name: string): Promise<string | undefined> {
    const list = await expectJson<{ repos?: { uid: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${groupUid}&name=${name}`, {
        token: wharf.adminToken,
      }),
    );
    return list.repos?.[0]?.uid;
  }

  async function childGroupNamed(parent: string, name: string): Promise<string | undefined> {
    const list = await expectJson<{ groups?: { uid: string; name: string }[] }>(
      await wharf.api(`/iam/v2/groups?uidp.children_of=${parent}`, { token: wharf.adminToken }),
    );
    return list.groups?.find((g) => g.name === name)?.uid;
  }

  before(async () => {
    wharf = await startTestServer({
      config: { publicNamespace: "public" },
      clock: { now: () => Date.now() + clockSkewMs },
    });
    host = new URL(wharf.registryUrl).host;
    adminReg = await wharf.registryToken();
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    await wharf.create("/iam/v2/groups", { name: "globex" });
    appImage = await pushImage(wharf, "acme/app", "latest", adminReg, "acme-app");
    await pushImage(wharf, "acme/other", "latest", adminReg, "acme-other");
    await pushImage(wharf, "globex/app", "latest", adminReg, "globex-app");
  });
  after(() => wharf.close());

  it("challenges /v2/ without credentials with the token realm and service", async () => {
    const res = await wharf.registry("/v2/");
    assert.equal(res.status, 401);
    assert.equal(
      res.headers.get("www-authenticate"),
      `Bearer realm="${wharf.registryUrl}/token",service="${host}"`,
    );
    assert.equal((await ociErrorOf(res)).code, "UNAUTHORIZED");
    const ok = await wharf.registry("/v2/", { token: adminReg });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get("docker-distribution-api-version"), "registry/2.0");
  });

  it("challenges a repository request without a token with the repository scope", async () => {
    const pull = await manifestOf("acme/app", "latest");
    assert.equal(pull.status, 401);
    assert.deepEqual(challengeParams(pull.headers.get("www-authenticate")), {
      realm: `${wharf.registryUrl}/token`,
      service: host,
      scope: "repository:acme/app:pull",
    });
    assert.equal((await ociErrorOf(pull)).code, "UNAUTHORIZED");
    const push = await uploadBlob(wharf, "acme/app", "anonymous bytes");
    assert.equal(push.status, 401);
    assert.equal(
      challengeParams(push.headers.get("www-authenticate")).scope,
      "repository:acme/app:pull,push",
    );
    await push.arrayBuffer();
  });

  it("issues a scoped registry token for _token:<registry token> that works only for its repository", async () => {
    const { body, claims } = await issued(["repository:acme/app:pull,push"], adminReg);
    assert.equal(body.access_token, body.token);
    assert.equal(typeof body.expires_in, "number");
    assert.ok(body.expires_in > 0 && body.expires_in <= 3600, `expires_in ${body.expires_in}`);
    assert.match(body.issued_at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    assert.ok(Math.abs(Date.parse(body.issued_at) - Date.now()) < 10_000, "issued_at is now");
    assert.equal(claims.aud, wharf.registryUrl);
    assert.equal(claims.sub, ADMIN_IDENTITY_UID);
    assert.equal(claims.iss, wharf.apiUrl);
    assert.equal((claims.exp ?? 0) - (claims.iat ?? 0), body.expires_in);
    assert.deepEqual(claims.access, [{ type: "repository", name: "acme/app", actions: ["pull", "push"] }]);

    const pulled = await manifestOf("acme/app", "latest", body.token);
    assert.equal(pulled.status, 200);
    assert.deepEqual(Buffer.from(await pulled.arrayBuffer()), appImage.manifest);

    const other = await manifestOf("acme/other", "latest", body.token);
    assert.equal(other.status, 401);
    assert.deepEqual(challengeParams(other.headers.get("www-authenticate")), {
      realm: `${wharf.registryUrl}/token`,
      service: host,
      scope: "repository:acme/other:pull",
      error: "insufficient_scope",
    });
    assert.equal((await ociErrorOf(other)).code, "UNAUTHORIZED");

    // A token never outlives the credential it was exchanged for.
    const shortCredential = await wharf.registryToken(ADMIN_IDENTITY_UID, 100);
    const capped = await issued(["repository:acme/app:pull"], shortCredential);
    assert.ok(capped.body.expires_in <= 100, `expires_in ${capped.body.expires_in}`);
    assert.ok((capped.claims.exp ?? 0) <= (decodeJwt(shortCredential).exp ?? 0), "exp within the credential");

    // Bearer at /token works too, and a pull-only token cannot push.
    const pullOnly = await expectJson<TokenResponse>(
      await wharf.registry(`/token?scope=repository:acme/app:pull`, { token: adminReg }),
    );
    assert.deepEqual(decodeJwt(pullOnly.token).access, [
      { type: "repository", name: "acme/app", actions: ["pull"] },
    ]);
    const push = await uploadBlob(wharf, "acme/app", "pull-only push", pullOnly.token);
    assert.equal(push.status, 401);
    assert.equal(challengeParams(push.headers.get("www-authenticate")).error, "insufficient_scope");
    await push.arrayBuffer();
  });

  it("rejects platform API tokens and tokens of foreign audiences with 403 DENIED", async () => {
    const apiToken = await wharf.tokenFor(ADMIN_IDENTITY_UID);
    const atToken = await tokenEndpoint(["repository:acme/app:pull"], apiToken);
    assert.equal(atToken.status, 403);
    assert.equal((await ociErrorOf(atToken)).code, "DENIED");

    const direct = await manifestOf("acme/app", "latest", apiToken);
    assert.equal(direct.status, 403);
    assert.equal((await ociErrorOf(direct)).code, "DENIED");

    const base = await wharf.registry("/v2/", { token: apiToken });
    assert.equal(base.status, 403);
    await base.arrayBuffer();

    const foreign = await createIssuer({
      store: wharf.store,
      issuerUrl: wharf.apiUrl,
      clock: { now: () => Date.now() + clockSkewMs },
    }).mint({ subject: ADMIN_IDENTITY_UID, audience: "http://registry.example.com", ttlSeconds: 600 });
    const foreignRes = await manifestOf("acme/app", "latest", foreign);
    assert.equal(foreignRes.status, 403);
    assert.equal((await ociErrorOf(foreignRes)).code, "DENIED");
  });

  it("answers 401 for tokens that do not verify", async () => {
    for (const garbage of ["garbage", "a.b.c", `${adminReg.slice(0, -6)}AAAAAA`]) {
      const res = await manifestOf("acme/app", "latest", garbage);
      assert.equal(res.status, 401, garbage);
      assert.equal(challengeParams(res.headers.get("www-authenticate")).error, "invalid_token");
      assert.equal((await ociErrorOf(res)).code, "UNAUTHORIZED");
      const atToken = await tokenEndpoint(["repository:acme/app:pull"], garbage);
      assert.equal(atToken.status, 401, garbage);
      await atToken.arrayBuffer();
    }
    // Basic credentials with a user other than `_token`.
    const wrongUser = await wharf.registry("/token?scope=repository:acme/app:pull", {
      headers: { authorization: `Basic ${Buffer.from(`bob:${adminReg}`).toString("base64")}` },
    });
    assert.equal(wrongUser.status, 401);
    await wrongUser.arrayBuffer();
  });

  it("limits a registry.pull holder at one organization to pulling there", async () => {
    const puller = await identity(acme, "puller");
    await bind(acme, puller, builtInRoleUid("registry.pull"));
    const direct = await wharf.registryToken(puller);

    const { claims } = await issued(["repository:acme/app:pull,push", "repository:globex/app:pull"], direct);
    assert.equal(claims.sub, puller);
    assert.deepEqual(claims.access, [{ type: "repository", name: "acme/app", actions: ["pull"] }]);
    const scoped = (await issued(["repository:acme/app:pull,push"], direct)).body.token;

    // Pull at acme: with the scoped token and with the direct registry-audience token.
    assert.equal((await manifestOf("acme/app", "latest", scoped)).status, 200);
    assert.equal((await manifestOf("acme/app", "latest", direct)).status, 200);

    // Push at acme: the scoped token lacks the scope; the direct token lacks the binding.
    const viaToken = await uploadBlob(wharf, "acme/app", "puller push", scoped);
    assert.equal(viaToken.status, 401);
    assert.equal(challengeParams(viaToken.headers.get("www-authenticate")).error, "insufficient_scope");
    await viaToken.arrayBuffer();
    const viaDirect = await uploadBlob(wharf, "acme/app", "puller push", direct);
    assert.equal(viaDirect.status, 403);
    assert.equal((await ociErrorOf(viaDirect)).code, "DENIED");
    const manifestPut = await putManifest(wharf, "acme/app", "hijack", appImage.manifest, direct);
    assert.equal(manifestPut.status, 403);
    await manifestPut.arrayBuffer();

    // Pull at globex: denied either way.
    const otherScoped = await manifestOf("globex/app", "latest", scoped);
    assert.equal(otherScoped.status, 401);
    await otherScoped.arrayBuffer();
    const otherDirect = await manifestOf("globex/app", "latest", direct);
    assert.equal(otherDirect.status, 403);
    assert.equal((await ociErrorOf(otherDirect)).code, "DENIED");
    const globexToken = await issued(["repository:globex/app:pull"], direct);
    assert.deepEqual(globexToken.claims.access, []);
  });

  it("creates missing repos and subgroups on push only for roles holding the create capabilities", async () => {
    // Owner (the organization creator's role) creates a subgroup and a repo.
    const owner = await identity(acme, "owner-bot");
    await bind(acme, owner, builtInRoleUid("owner"));
    const ownerToken = await wharf.registryToken(owner);
    await pushImage(wharf, "acme/sub/newrepo", "v1", ownerToken, "owner-new");
    const sub = await childGroupNamed(acme, "sub");
    assert.ok(sub, "subgroup acme/sub created");
    assert.ok(await repoNamed(sub, "newrepo"), "repo acme/sub/newrepo created");
    assert.equal((await manifestOf("acme/sub/newrepo", "v1", ownerToken)).status, 200);

    // registry.push holds CAP_REPO_CREATE and CAP_IAM_GROUPS_CREATE.
    const pusher = await identity(acme, "pusher");
    await bind(acme, pusher, builtInRoleUid("registry.push"));
    const pusherToken = await wharf.registryToken(pusher);
    const scoped = await issued(["repository:acme/team/newrepo:pull,push"], pusherToken);
    assert.deepEqual(scoped.claims.access, [
      { type: "repository", name: "acme/team/newrepo", actions: ["pull", "push"] },
    ]);
    await pushImage(wharf, "acme/team/newrepo", "v1", scoped.body.token, "pusher-new");
    const team = await childGroupNamed(acme, "team");
    assert.ok(team && (await repoNamed(team, "newrepo")), "acme/team/newrepo created by registry.push");

    // A role that may create repos but not groups: a repo directly under the org, not a subgroup.
    const noGroups = await wharf.create(`/iam/v2/roles/${acme}`, {
      name: "repo-creator",
      capabilities: ["CAP_REPO_BLOBS_GET", "CAP_MANIFEST_CREATE", "CAP_TAG_CREATE", "CAP_REPO_CREATE"],
    });
    const creator = await identity(acme, "repo-creator");
    await bind(acme, creator, noGroups);
    const creatorToken = await wharf.registryToken(creator);
    await pushImage(wharf, "acme/flat", "v1", creatorToken, "creator-flat");
    assert.ok(await repoNamed(acme, "flat"), "acme/flat created without CAP_IAM_GROUPS_CREATE");
    const refusedGroup = await uploadBlob(wharf, "acme/nested/repo", "nested", creatorToken);
    assert.equal(refusedGroup.status, 403);
    assert.equal((await ociErrorOf(refusedGroup)).code, "DENIED");
    assert.equal(await childGroupNamed(acme, "nested"), undefined, "no subgroup created");
    const creatorScoped = await issued(["repository:acme/nested/repo:pull,push"], creatorToken);
    assert.deepEqual(creatorScoped.claims.access, [
      { type: "repository", name: "acme/nested/repo", actions: ["pull"] },
    ]);

    // A role that may push to existing repos only.
    const existingOnly = await wharf.create(`/iam/v2/roles/${acme}`, {
      name: "existing-pusher",
      capabilities: ["CAP_REPO_BLOBS_GET", "CAP_MANIFEST_CREATE", "CAP_TAG_CREATE"],
    });
    const tagger = await identity(acme, "existing-pusher");
    await bind(acme, tagger, existingOnly);
    const taggerToken = await wharf.registryToken(tagger);
    await pushImage(wharf, "acme/app", "by-tagger", taggerToken, "tagger-image");
    const refusedRepo = await uploadBlob(wharf, "acme/brandnew", "brand new", taggerToken);
    assert.equal(refusedRepo.status, 403);
    assert.equal((await ociErrorOf(refusedRepo)).code, "DENIED");
    assert.equal(await repoNamed(acme, "brandnew"), undefined, "no repo created");
  });

  it("denies identities created under a subgroup even with bindings (spec rule)", async () => {
    const team = await wharf.create(`/iam/v2/groups/${acme}`, { name: "robots" });
    await pushImage(wharf, "acme/robots/tool", "latest", adminReg, "robots-tool");
    const deep = await identity(team, "deep-bot");
    assert.equal(deep.split("/").length, 3, "uid depth 3");
    // An identity can be bound in its own group or below only.
    await bind(team, deep, builtInRoleUid("owner"));
    // The binding is real: the platform API lets it read the repo.
    const toolUid = await repoNamed(team, "tool");
    await expectJson(await wharf.api(`/registry/v2/repos/${toolUid}`, { token: await wharf.tokenFor(deep) }));

    const direct = await wharf.registryToken(deep);
    const pull = await manifestOf("acme/robots/tool", "latest", direct);
    assert.equal(pull.status, 403);
    assert.equal((await ociErrorOf(pull)).code, "DENIED");
    const push = await uploadBlob(wharf, "acme/robots/tool", "deep push", direct);
    assert.equal(push.status, 403);
    await push.arrayBuffer();
    const { claims } = await issued(["repository:acme/robots/tool:pull,push"], direct);
    assert.deepEqual(claims.access, []);
  });

  it("revokes registry access within seconds of deleting the role binding", async () => {
    const temp = await identity(acme, "temp-bot");
    const binding = await bind(acme, temp, builtInRoleUid("registry.pull"));
    const direct = await wharf.registryToken(temp);
    const scoped = (await issued(["repository:acme/app:pull"], direct)).body.token;
    assert.equal((await manifestOf("acme/app", "latest", direct)).status, 200);
    assert.equal((await manifestOf("acme/app", "latest", scoped)).status, 200);

    await expectJson(
      await wharf.api(`/iam/v2/roleBindings/${binding}`, { method: "DELETE", token: wharf.adminToken }),
    );
    assert.equal(await statusWithin(5000, 403, () => manifestOf("acme/app", "latest", direct)), 403);
    // A token issued while the binding existed stops working too: bindings are checked per request.
    assert.equal(await statusWithin(5000, 403, () => manifestOf("acme/app", "latest", scoped)), 403);
    assert.deepEqual((await issued(["repository:acme/app:pull"], direct)).claims.access, []);
  });

  it("revokes registry access within seconds when another process deletes the binding", async () => {
    const temp = await identity(acme, "temp-bot-2");
    const binding = await bind(acme, temp, builtInRoleUid("registry.pull"));
    const direct = await wharf.registryToken(temp);
    assert.equal((await manifestOf("acme/app", "latest", direct)).status, 200);
    // Straight to the store, as a second server process sharing the database would.
    assert.equal(await wharf.store.roleBindings.delete(binding), true);
    assert.equal(await statusWithin(5000, 403, () => manifestOf("acme/app", "latest", direct)), 403);
  });

  it("keeps an upload session to the identity that started it", async () => {
    const started = await wharf.registry("/v2/acme/app/blobs/uploads/", { method: "POST", token: adminReg });
    assert.equal(started.status, 202);
    const location = started.headers.get("location") as string;
    await started.arrayBuffer();
    const intruder = await identity(acme, "intruder");
    await bind(acme, intruder, builtInRoleUid("registry.push"));
    const intruderToken = await wharf.registryToken(intruder);
    const patched = await wharf.registry(location, {
      method: "PATCH",
      token: intruderToken,
      headers: { "content-type": "application/octet-stream" },
      body: Buffer.from("not mine"),
    });
    assert.equal(patched.status, 403);
    assert.equal((await ociErrorOf(patched)).code, "DENIED");
    const status = await wharf.registry(location, { token: adminReg });
    assert.equal(status.status, 204);
    assert.equal(status.headers.get("range"), "0-0", "nothing was appended");
  });

  it("reads the credentials and scope of an OAuth2 form POST to /token (containerd)", async () => {
    const form = new URLSearchParams({
      grant_type: "password",
      service: host,
      client_id: "containerd-client",
      username: "_token",
      password: adminReg,
      scope: "repository:acme/app:pull,push",
    });
    const res = await wharf.registry("/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: form.toString(),
    });
    const body = await expectJson<TokenResponse>(res);
    const claims = decodeJwt(body.access_token);
    assert.equal(claims.sub, ADMIN_IDENTITY_UID);
    assert.deepEqual(claims.access, [{ type: "repository", name: "acme/app", actions: ["pull", "push"] }]);
    // Grants Wharf does not issue, and non-form bodies, are 405 so clients fall back to GET.
    const refusals: Array<[string, string]> = [
      ["application/x-www-form-urlencoded", "grant_type=refresh_token&refresh_token=x&service=s"],
      ["application/json", "{}"],
    ];
    for (const [type, payload] of refusals) {
      const refused = await wharf.registry("/token", {
        method: "POST",
        headers: { "content-type": type },
        body: payload,
      });
      assert.equal(refused.status, 405, `${type} ${payload}`);
      assert.equal((await ociErrorOf(refused)).code, "UNSUPPORTED");
    }
  });

  it("stops an upload in progress once the pusher's role binding is deleted", async () => {
    const uploader = await identity(acme, "uploader");
    const binding = await bind(acme, uploader, builtInRoleUid("registry.push"));
    const token = await wharf.registryToken(uploader);
    const started = await wharf.registry("/v2/acme/app/blobs/uploads/", { method: "POST", token });
    assert.equal(started.status, 202);
    const location = started.headers.get("location") as string;
    await started.arrayBuffer();
    await expectJson(
      await wharf.api(`/iam/v2/roleBindings/${binding}`, { method: "DELETE", token: wharf.adminToken }),
    );
    const fresh = () => wharf.registry("/v2/acme/app/blobs/uploads/", { method: "POST", token });
    assert.equal(await statusWithin(5000, 403, fresh), 403, "new uploads refused");

    const data = Buffer.from("written after the binding was deleted");
    const finished = await wharf.registry(`${location}?digest=${sha256(data)}`, {
      method: "PUT",
      token,
      headers: { "content-type": "application/octet-stream" },
      body: data,
    });
    assert.equal(finished.status, 403, "the session cannot be finished by a revoked identity");
    assert.equal((await ociErrorOf(finished)).code, "DENIED");
    const blob = await wharf.registry(`/v2/acme/app/blobs/${sha256(data)}`, {
      method: "HEAD",
      token: adminReg,
    });
    assert.equal(blob.status, 404, "nothing was stored");
  });

  describe("anonymous pulls in the public namespace", () => {
    let latest: BuiltImage;
    let next: BuiltImage;
    let old: BuiltImage;
    let anonymous: string;

    before(async () => {
      await wharf.create("/iam/v2/groups", { name: "public" });
      latest = buildImage("public-latest-1", ["shared layer", "latest-1 layer"]);
      old = buildImage("public-old", ["shared layer", "old-only layer"]);
      await pushImage(wharf, "public/img", "latest", adminReg, latest);
      await pushImage(wharf, "public/img", "old", adminReg, old);
    });

    it("issues an anonymous pull-only token for the public namespace", async () => {
      const { body, claims } = await issued(["repository:public/img:pull,push"]);
      assert.equal(claims.aud, wharf.registryUrl);
      assert.deepEqual(claims.access, [{ type: "repository", name: "public/img", actions: ["pull"] }]);
      anonymous = body.token;
      const push = await uploadBlob(wharf, "public/img", "anonymous push", anonymous);
      assert.equal(push.status, 401);
      await push.arrayBuffer();
    });

    it("lets the anonymous token read latest, its blobs and its history, but not other tags", async () => {
      const manifest = await manifestOf("public/img", "latest", anonymous);
      assert.equal(manifest.status, 200);
      assert.deepEqual(Buffer.from(await manifest.arrayBuffer()), latest.manifest);
      for (const [digest, bytes] of latest.blobs) {
        const blob = await wharf.registry(`/v2/public/img/blobs/${digest}`, { token: anonymous });
        assert.equal(blob.status, 200, digest);
        assert.deepEqual(Buffer.from(await blob.arrayBuffer()), bytes);
      }
      const history = await expectJson<{ history: { digest: string }[] }>(
        await wharf.registry("/v2/public/img/_service/history/latest", { token: anonymous }),
      );
      assert.deepEqual(
        history.history.map((h) => h.digest),
        [latest.digest],
      );

      for (const ref of ["old", old.digest]) {
        const res = await manifestOf("public/img", ref, anonymous);
        assert.ok([401, 403].includes(res.status), `${ref}: ${res.status}`);
        await res.arrayBuffer();
      }
      const oldOnly = sha256("old-only layer");
      const blob = await wharf.registry(`/v2/public/img/blobs/${oldOnly}`, { token: anonymous });
      assert.ok([401, 403].includes(blob.status), `old-only blob: ${blob.status}`);
      await blob.arrayBuffer();
      const oldHistory = await wharf.registry("/v2/public/img/_service/history/old", { token: anonymous });
      assert.ok([401, 403].includes(oldHistory.status), `history of old: ${oldHistory.status}`);
      await oldHistory.arrayBuffer();
      const tags = await wharf.registry("/v2/public/img/tags/list", { token: anonymous });
      assert.ok([401, 403].includes(tags.status), `tags list: ${tags.status}`);
      await tags.arrayBuffer();
    });

    it("keeps digests latest pointed to pullable after latest moves", async () => {
      next = buildImage("public-latest-2", ["shared layer", "latest-2 layer"]);
      await pushImage(wharf, "public/img", "latest", adminReg, next);
      const current = await manifestOf("public/img", "latest", anonymous);
      assert.equal(current.status, 200);
      assert.deepEqual(Buffer.from(await current.arrayBuffer()), next.manifest);
      const pinned = await manifestOf("public/img", latest.digest, anonymous);
      assert.equal(pinned.status, 200);
      assert.deepEqual(Buffer.from(await pinned.arrayBuffer()), latest.manifest);
      const oldLayer = await wharf.registry(`/v2/public/img/blobs/${sha256("latest-1 layer")}`, {
        token: anonymous,
      });
      assert.equal(oldLayer.status, 200);
      await oldLayer.arrayBuffer();
      const history = await expectJson<{ history: { digest: string }[] }>(
        await wharf.registry("/v2/public/img/_service/history/latest", { token: anonymous }),
      );
      assert.deepEqual(
        history.history.map((h) => h.digest),
        [latest.digest, next.digest],
      );
      const stillOld = await manifestOf("public/img", old.digest, anonymous);
      assert.ok([401, 403].includes(stillOld.status), `old digest: ${stillOld.status}`);
      await stillOld.arrayBuffer();
    });

    it("gives anonymous callers nothing in a private organization", async () => {
      const { body, claims } = await issued(["repository:acme/app:pull"]);
      assert.deepEqual(claims.access, []);
      const res = await manifestOf("acme/app", "latest", body.token);
      assert.equal(res.status, 401);
      assert.equal(challengeParams(res.headers.get("www-authenticate")).error, "insufficient_scope");
      await res.arrayBuffer();
      const history = await wharf.registry("/v2/acme/app/_service/history/latest", { token: body.token });
      assert.equal(history.status, 401);
      await history.arrayBuffer();
      const blob = await wharf.registry(`/v2/acme/app/blobs/${appImage.configDigest}`, { token: body.token });
      assert.equal(blob.status, 401);
      await blob.arrayBuffer();
    });
  });

  // Last: it moves the server clock forward.
  it("continues an upload with the token that started it after that token expired", async () => {
    const shortLived = await wharf.registryToken(ADMIN_IDENTITY_UID, 1);
    const started = await wharf.registry("/v2/acme/app/blobs/uploads/", {
      method: "POST",
      token: shortLived,
    });
    assert.equal(started.status, 202);
    const location = started.headers.get("location");
    assert.ok(location, "Location of the upload session");
    await started.arrayBuffer();

    // Expired on the server's clock (every verifier reads it), and past its 30 s clock-skew tolerance.
    clockSkewMs += 60_000;

    const expiredFresh = await wharf.registry("/v2/acme/app/blobs/uploads/", {
      method: "POST",
      token: shortLived,
    });
    assert.equal(expiredFresh.status, 401);
    assert.equal(challengeParams(expiredFresh.headers.get("www-authenticate")).error, "invalid_token");
    await expiredFresh.arrayBuffer();

    const data = Buffer.from("a long upload, finished after its token expired");
    const patched = await wharf.registry(location, {
      method: "PATCH",
      token: shortLived,
      headers: { "content-type": "application/octet-stream", "content-range": `0-19` },
      body: data.subarray(0, 20),
    });
    assert.equal(patched.status, 202, await patched.text());
    assert.equal(patched.headers.get("range"), "0-19");
    const next = patched.headers.get("location") ?? location;
    const sep = next.includes("?") ? "&" : "?";
    const finished = await wharf.registry(`${next}${sep}digest=${sha256(data)}`, {
      method: "PUT",
      token: shortLived,
      headers: { "content-type": "application/octet-stream" },
      body: data.subarray(20),
    });
    assert.equal(finished.status, 201, await finished.text());

    const blob = await wharf.registry(`/v2/acme/app/blobs/${sha256(data)}`, {
      token: await wharf.registryToken(),
    });
    assert.equal(blob.status, 200);
    assert.deepEqual(Buffer.from(await blob.arrayBuffer()), data);

    // A manifest push with the expired token is a new operation: refused.
    const late = await pushBlob(wharf, "acme/app", "after expiry", shortLived).catch((e: Error) => e.message);
    assert.match(String(late), /answered 401/);
  });

  // After the upload test: it moves the server clock forward too.
  it("does not exchange a credential that has already expired for a fresh token", async () => {
    const credential = await wharf.registryToken(ADMIN_IDENTITY_UID, 1);
    const credentialExp = decodeJwt(credential).exp ?? 0;
    clockSkewMs += 10_000; // expired 9 s ago: inside the verifier's clock-skew tolerance
    const res = await tokenEndpoint(["repository:acme/app:pull"], credential);
    if (res.status === 200) {
      const { token } = await expectJson<TokenResponse>(res);
      const exp = decodeJwt(token).exp ?? 0;
      assert.ok(exp <= credentialExp, `new token expires ${exp - credentialExp} s after its credential`);
    } else {
      assert.equal(res.status, 401);
      await res.arrayBuffer();
    }
  });
});
