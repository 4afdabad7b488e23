import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { Code, createWharfClient, staticToken, WharfApiError } from "../../src/sdk/index.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("the SDK's whoAmI (GET /auth/v1/ok)", () => {
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
});
