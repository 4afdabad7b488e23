import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import {
  browserLoginUrl,
  Code,
  checkBrowserLogin,
  createPkcePair,
  createWharfClient,
  redeemLoginCode,
  staticToken,
  WharfApiError,
} from "../../src/sdk/index.js";
import { OCI_MANIFEST, pushBlob, pushImage, putManifest, sha256 } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("the SDK's helpers for the console: whoAmI, browser login, referrers", () => {
  let wharf: TestServer;
  let acme: string;
  let viewer: string;

  before(async () => {
    wharf = await startTestServer();
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    viewer = await wharf.create(`/iam/v2/identities/${acme}`, {
      name: "viewer-bot",
      claimMatch: { issuer: "https://ci.example", subject: "bot" },
    });
    await wharf.create(`/iam/v2/roleBindings/${acme}`, {
      identityUid: viewer,
      roleUid: builtInRoleUid("viewer"),
    });
  });
  after(() => wharf.close());

  it("names the administrator as one, with no groups of its own", async () => {
    const client = createWharfClient({ apiUrl: wharf.apiUrl, tokenSource: staticToken(wharf.adminToken) });
    const me = await client.whoAmI();
    assert.equal(me.identity.uid, ADMIN_IDENTITY_UID);
    assert.equal(me.admin, true);
    assert.ok(Array.isArray(me.groups));
  });

  it("lists an identity's groups with the role and its capabilities, and admin false", async () => {
    const token = await wharf.tokenFor(viewer);
    const me = await createWharfClient({ apiUrl: wharf.apiUrl, tokenSource: staticToken(token) }).whoAmI();
    assert.equal(me.identity.uid, viewer);
    assert.equal(me.identity.name, "viewer-bot");
    assert.equal(me.admin, false);
    assert.deepEqual(
      me.groups.map((g) => [g.uid, g.name, g.role.name]),
      [[acme, "acme", "viewer"]],
    );
    assert.ok(me.groups[0]!.capabilities.includes("repo.list"));
    assert.ok(!me.groups[0]!.capabilities.includes("repo.create"), "a viewer cannot create");
  });

  it("rejects a missing or forged token with UNAUTHENTICATED as a WharfApiError", async () => {
    for (const tokenSource of [undefined, staticToken("not.a.jwt")]) {
      const err = await createWharfClient({ apiUrl: wharf.apiUrl, ...(tokenSource ? { tokenSource } : {}) })
        .whoAmI()
        .then(
          () => assert.fail("answered"),
          (e: unknown) => e,
        );
      assert.ok(err instanceof WharfApiError);
      assert.equal(err.code, Code.Unauthenticated);
      assert.ok(err.message.length > 0, "the server's message");
    }
  });

  it("redeemLoginCode refuses an unknown code with PERMISSION_DENIED as a WharfApiError", async () => {
    const err = await redeemLoginCode(wharf.apiUrl, { code: "made-up", codeVerifier: "v".repeat(43) }).then(
      () => assert.fail("redeemed"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof WharfApiError);
    assert.equal(err.code, Code.PermissionDenied);
    assert.match(err.message, /login code/);
  });

  it("checkBrowserLogin passes a login the server would start, and rejects one it refuses", async () => {
    const params = {
      redirect: `${wharf.apiUrl}/login/callback`,
      codeChallenge: (await createPkcePair()).challenge,
      state: "s",
    };
    // This server has no default provider: refused with the server's reason.
    const err = await checkBrowserLogin(browserLoginUrl(wharf.apiUrl, params)).then(
      () => assert.fail("accepted"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof WharfApiError);
    assert.equal(err.code, Code.FailedPrecondition);
    const foreign = await checkBrowserLogin(
      browserLoginUrl(wharf.apiUrl, { ...params, redirect: "https://evil.example/cb" }),
    ).then(
      () => assert.fail("accepted"),
      (e: unknown) => e as WharfApiError,
    );
    assert.deepEqual(
      foreign.fieldViolations.map((v) => v.field),
      ["redirect"],
    );
  });

  it("referrers lists the manifests whose subject is an image, [] when none, NOT_FOUND for no image", async () => {
    const token = await wharf.registryToken();
    const image = await pushImage(wharf, "acme/app", "v1", token, "referred image");
    const empty = Buffer.from("{}");
    await pushBlob(wharf, "acme/app", empty, token);
    const sbom = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_MANIFEST,
        artifactType: "application/spdx+json",
        config: { mediaType: "application/vnd.oci.empty.v1+json", digest: sha256(empty), size: 2 },
        layers: [{ mediaType: "application/vnd.oci.empty.v1+json", digest: sha256(empty), size: 2 }],
        subject: { mediaType: OCI_MANIFEST, digest: image.digest, size: image.manifest.length },
      }),
    );
    const put = await putManifest(wharf, "acme/app", sha256(sbom), sbom, token);
    assert.equal(put.status, 201, await put.text());

    const client = createWharfClient({ apiUrl: wharf.apiUrl, tokenSource: staticToken(wharf.adminToken) });
    const referrers = await client.referrers("acme/app", image.digest);
    assert.deepEqual(
      referrers.map((r) => [r.digest, r.artifactType, r.mediaType]),
      [[sha256(sbom), "application/spdx+json", OCI_MANIFEST]],
    );
    assert.equal(referrers[0]?.size, sbom.length);
    assert.deepEqual(await client.referrers("acme/app", sha256(sbom)), [], "nothing refers to the SBOM");
    const missing = await client.referrers("acme/nope", image.digest).then(
      () => assert.fail("answered"),
      (e: unknown) => e as WharfApiError,
    );
    assert.ok(missing instanceof WharfApiError);
    assert.equal(missing.code, Code.NotFound);
  });
});
