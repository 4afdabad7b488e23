import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createIssuer } from "../../src/auth/issuer.js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { newChildUid, newRootUid } from "../../src/core/uidp.js";
import { registeredIdentityUid } from "../../src/iam/registered-identity.js";
import { detail, expectError, expectJson, type StatusBody } from "../support/api-assertions.js";
import { type RegisteredPerson, registeredPerson } from "../support/registered-person.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const SECRET = "s3cr3t-client-secret-never-shown";
const NEW_SECRET = "an0ther-secret-never-shown";
const VIEWER = builtInRoleUid("viewer");
const OWNER = builtInRoleUid("owner");

/** An identity provider or account association as JSON. */
interface ResourceJson {
  uid: string;
  defaultRole?: string;
  description?: string;
  oidc: Record<string, unknown>;
  amazon?: unknown;
  google?: unknown;
  azure?: unknown;
  github?: unknown;
}

/** Polls `request` every 100 ms until it answers `wanted` or `ms` pass; returns the last status. */
async function statusWithin(ms: number, wanted: number, request: () => Promise<Response>): Promise<number> {
  const deadline = Date.now() + ms;
  let status = (await request()).status;
  while (status !== wanted && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    status = (await request()).status;
  }
  return status;
}

describe("IAM federation resources over REST", () => {
  let wharf: TestServer;
  /** Added to the server's clock: lets tests expire invites without waiting. */
  let skewMs = 0;
  /** Every response body seen, to prove the client secret never comes back. */
  const bodies: string[] = [];
  let alice: RegisteredPerson;
  let bob: RegisteredPerson;
  let acme: string;
  let globex: string;

  /** fetch through the test server, remembering the body text. */
  async function call(
    method: string,
    path: string,
    token: string,
    body?: unknown,
  ): Promise<{ status: number; json: Record<string, unknown>; res: Response }> {
    const res = await wharf.api(path, { method, token, ...(body === undefined ? {} : { body }) });
    const text = await res.text();
    bodies.push(text);
    const json = (text === "" ? {} : JSON.parse(text)) as Record<string, unknown>;
    return { status: res.status, json, res: new Response(text, { status: res.status }) };
  }

  async function ok<T = Record<string, unknown>>(
    method: string,
    path: string,
    token: string,
    body?: unknown,
  ) {
    const r = await call(method, path, token, body);
    assert.equal(r.status, 200, `${method} ${path}: ${JSON.stringify(r.json)}`);
    return r.json as T;
  }

  async function fails(
    method: string,
    path: string,
    token: string,
    body: unknown,
    expected: { status: number; code: number; field?: string; reason?: string },
  ): Promise<StatusBody> {
    const r = await call(method, path, token, body);
    return expectError(r.res, expected);
  }

  const idpBody = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    defaultRole: VIEWER,
    oidc: {
      issuer: "https://login.acme.example",
      clientId: "wharf",
      clientSecret: SECRET,
      additionalScopes: ["email", "openid"],
      groupsClaim: "groups",
      correlationRule: "CORRELATION_RULE_SUB_EQUALS_EXTERNAL_ID",
    },
    ...extra,
  });

  before(async () => {
    wharf = await startTestServer({
      clock: { now: () => Date.now() + skewMs },
      config: { termsDocuments: "sfdpa.v1,skills-tos.v1,custom.v2" },
    });
    alice = await registeredPerson(wharf, "alice");
    bob = await registeredPerson(wharf, "bob");
    acme = (await ok<{ uid: string }>("POST", "/iam/v2/groups", alice.token, { name: "acme" })).uid;
    globex = (await ok<{ uid: string }>("POST", "/iam/v2/groups", bob.token, { name: "globex" })).uid;
  });
  after(async () => {
    const everything = bodies.join("\n");
    const logs = JSON.stringify(wharf.logLines);
    await wharf.close();
    for (const secret of [SECRET, NEW_SECRET]) {
      assert.equal(everything.includes(secret), false, "the client secret never appears in a response");
      assert.equal(logs.includes(secret), false, "the client secret never appears in a log line");
    }
  });

  describe("identity providers", () => {
    let idp: string;

    it("creates one without returning its secret, drops `openid` from the extra scopes", async () => {
      const created = await ok<ResourceJson>(
        "POST",
        `/iam/v2/identityProviders/${acme}`,
        alice.token,
        idpBody("okta"),
      );
      idp = created.uid;
      assert.match(idp, new RegExp(`^${acme}/[0-9a-f]{16}$`), "uid under the group");
      assert.equal(created.defaultRole, VIEWER, "default role");
      assert.deepEqual(
        created.oidc,
        {
          issuer: "https://login.acme.example",
          clientId: "wharf",
          additionalScopes: ["email"],
          groupsClaim: "groups",
          correlationRule: "CORRELATION_RULE_SUB_EQUALS_EXTERNAL_ID",
        },
        "oidc block without the secret",
      );
      assert.equal(
        (await wharf.store.identityProviders.get(idp))?.oidc.clientSecret,
        SECRET,
        "secret stored",
      );
      const got = await ok<ResourceJson>("GET", `/iam/v2/identityProviders/${idp}`, alice.token);
      assert.equal(got.oidc.clientSecret, undefined, "no secret on get");
    });

    it("lists with uidp, name filter, order_by and page tokens", async () => {
      await ok("POST", `/iam/v2/identityProviders/${acme}`, alice.token, idpBody("azure-ad"));
      const page1 = await ok<{
        identityProviders: { name: string }[];
        nextPageToken: string;
        totalCount: string;
      }>(
        "GET",
        `/iam/v2/identityProviders?uidp.descendants_of=${acme}&order_by=name%20desc&page_size=1`,
        alice.token,
      );
      assert.deepEqual(
        page1.identityProviders.map((p) => p.name),
        ["okta"],
        "first page by name desc",
      );
      assert.equal(page1.totalCount, "2", "total");
      const page2 = await ok<{ identityProviders: { name: string }[]; nextPageToken?: string }>(
        "GET",
        `/iam/v2/identityProviders?uidp.descendants_of=${acme}&order_by=name%20desc&page_size=1&page_token=${page1.nextPageToken}`,
        alice.token,
      );
      assert.deepEqual(
        page2.identityProviders.map((p) => p.name),
        ["azure-ad"],
        "second page",
      );
      assert.equal(page2.nextPageToken ?? "", "", "last page");
      const byName = await ok<{ identityProviders: { uid: string }[] }>(
        "GET",
        "/iam/v2/identityProviders?name=okta",
        alice.token,
      );
      assert.deepEqual(
        byName.identityProviders.map((p) => p.uid),
        [idp],
        "name filter",
      );
    });

    it("PATCH keeps the secret unless clientSecret is sent; an empty one clears it only for PKCE", async () => {
      const stored = async () => (await wharf.store.identityProviders.get(idp))?.oidc;
      await ok("PATCH", `/iam/v2/identityProviders/${idp}`, alice.token, { description: "corporate" });
      assert.equal((await stored())?.clientSecret, SECRET, "description-only patch keeps the secret");

      // The mask names client_id and pkce_enabled only: the empty secret in the body is ignored.
      const masked = await ok<ResourceJson>(
        "PATCH",
        `/iam/v2/identityProviders/${idp}?updateMask=oidc.client_id,oidc.pkce_enabled`,
        alice.token,
        { oidc: { clientId: "wharf-2", clientSecret: "", pkceEnabled: true } },
      );
      assert.equal(masked.oidc.clientId, "wharf-2", "client id changed");
      assert.equal(masked.oidc.pkceEnabled, true, "pkce enabled");
      assert.equal(masked.description, "corporate", "other fields kept");
      assert.equal((await stored())?.clientSecret, SECRET, "secret kept: not in the mask");

      // Without a mask the body's keys are the mask: "clientSecret": "" names it, so it clears.
      await ok("PATCH", `/iam/v2/identityProviders/${idp}`, alice.token, { oidc: { clientSecret: "" } });
      assert.equal((await stored())?.clientSecret, "", "secret cleared");
      assert.equal((await stored())?.clientId, "wharf-2", "nested mask leaves the other oidc fields");

      await ok("PATCH", `/iam/v2/identityProviders/${idp}`, alice.token, {
        oidc: { clientSecret: NEW_SECRET, pkceEnabled: false },
      });
      assert.equal((await stored())?.clientSecret, NEW_SECRET, "new secret stored");
      const refused = await fails(
        "PATCH",
        `/iam/v2/identityProviders/${idp}`,
        alice.token,
        { oidc: { clientSecret: "" } },
        { status: 400, code: 3, field: "oidc.client_secret" },
      );
      assert.equal(refused.message.includes(NEW_SECRET), false, "the error does not echo the secret");
      assert.equal((await stored())?.clientSecret, NEW_SECRET, "nothing written");
    });

    it("correlationRule is immutable: restating is a no-op, changing is INVALID_ARGUMENT", async () => {
      await ok("PATCH", `/iam/v2/identityProviders/${idp}`, alice.token, {
        oidc: { correlationRule: "CORRELATION_RULE_SUB_EQUALS_EXTERNAL_ID" },
      });
      await fails(
        "PATCH",
        `/iam/v2/identityProviders/${idp}`,
        alice.token,
        { oidc: { correlationRule: "CORRELATION_RULE_OID_EQUALS_EXTERNAL_ID" } },
        { status: 400, code: 3, field: "oidc.correlation_rule" },
      );
      await fails(
        "PATCH",
        `/iam/v2/identityProviders/${idp}?updateMask=oidc.nope`,
        alice.token,
        { oidc: {} },
        { status: 400, code: 3, field: "update_mask" },
      );
    });

    it("refuses bad input with INVALID_ARGUMENT naming the field, writing nothing", async () => {
      const otherRole = await ok<{ uid: string }>("POST", `/iam/v2/roles/${globex}`, bob.token, {
        name: "globex-only",
        capabilities: ["CAP_REPO_LIST"],
      });
      const base = idpBody("bad-one");
      const cases: [unknown, string][] = [
        [{}, "name"],
        [{ ...base, name: "ab" }, "name"],
        [{ ...base, defaultRole: "" }, "default_role"],
        [{ ...base, defaultRole: otherRole.uid }, "default_role"],
        [{ ...base, defaultRole: newRootUid() }, "default_role"],
        [{ name: "no-oidc", defaultRole: VIEWER }, "oidc"],
        [{ ...base, oidc: { ...base.oidc, issuer: "http://login.example.com" } }, "oidc.issuer"],
        [{ ...base, oidc: { ...base.oidc, issuer: "not a url" } }, "oidc.issuer"],
        [{ ...base, oidc: { ...base.oidc, clientId: "" } }, "oidc.client_id"],
        [{ ...base, oidc: { ...base.oidc, clientSecret: "" } }, "oidc.client_secret"],
        [{ ...base, oidc: { ...base.oidc, additionalScopes: ["two words"] } }, "oidc.additional_scopes"],
      ];
      for (const [body, field] of cases) {
        await fails("POST", `/iam/v2/identityProviders/${acme}`, alice.token, body, {
          status: 400,
          code: 3,
          field,
        });
      }
      const list = await ok<{ totalCount: string }>(
        "GET",
        `/iam/v2/identityProviders?uidp.descendants_of=${acme}`,
        alice.token,
      );
      assert.equal(list.totalCount, "2", "nothing written");
      // http is fine on loopback; PKCE needs no secret.
      const local = await ok<{ uid: string }>(
        "POST",
        `/iam/v2/identityProviders/${acme}`,
        alice.token,
        idpBody("local-dev", {
          oidc: { issuer: "http://127.0.0.1:9999/realms/dev", clientId: "c", pkceEnabled: true },
        }),
      );
      await ok("DELETE", `/iam/v2/identityProviders/${local.uid}`, alice.token);
    });

    it("blocks deleting a group that holds one, and a role used as a default role", async () => {
      const team = (
        await ok<{ uid: string }>("POST", `/iam/v2/groups/${acme}`, alice.token, { name: "team" })
      ).uid;
      const role = (
        await ok<{ uid: string }>("POST", `/iam/v2/roles/${acme}`, alice.token, {
          name: "sso-user",
          capabilities: ["CAP_REPO_LIST"],
        })
      ).uid;
      const teamIdp = (
        await ok<{ uid: string }>(
          "POST",
          `/iam/v2/identityProviders/${team}`,
          alice.token,
          idpBody("team-sso", { defaultRole: role }),
        )
      ).uid;
      const blocked = await fails("DELETE", `/iam/v2/groups/${team}`, alice.token, undefined, {
        status: 400,
        code: 9,
      });
      const violations = (detail(blocked, "PreconditionFailure") as { violations: { type: string }[] })
        .violations;
      assert.equal(violations[0]?.type, "RESOURCE_NOT_EMPTY", "RESOURCE_NOT_EMPTY");
      const inUse = await fails("DELETE", `/iam/v2/roles/${role}`, alice.token, undefined, {
        status: 400,
        code: 9,
      });
      const used = (detail(inUse, "PreconditionFailure") as { violations: { type: string }[] }).violations;
      assert.equal(used[0]?.type, "RESOURCE_IN_USE", "RESOURCE_IN_USE");
      await ok("DELETE", `/iam/v2/identityProviders/${teamIdp}`, alice.token);
      await ok("DELETE", `/iam/v2/roles/${role}`, alice.token);
      await ok("DELETE", `/iam/v2/groups/${team}`, alice.token);
    });

    it("deletes a provider and its mappings", async () => {
      const sso = (
        await ok<{ uid: string }>(
          "POST",
          `/iam/v2/identityProviders/${acme}`,
          alice.token,
          idpBody("to-delete"),
        )
      ).uid;
      const mapping = (
        await ok<{ uid: string }>("POST", `/iam/v2/externalGroupRoleMappings/${sso}`, alice.token, {
          externalGroupId: "devs",
          roleUid: VIEWER,
        })
      ).uid;
      await ok("DELETE", `/iam/v2/identityProviders/${sso}`, alice.token);
      await fails("GET", `/iam/v2/identityProviders/${sso}`, alice.token, undefined, {
        status: 404,
        code: 5,
      });
      await fails("GET", `/iam/v2/externalGroupRoleMappings/${mapping}`, alice.token, undefined, {
        status: 404,
        code: 5,
      });
      await fails("DELETE", `/iam/v2/identityProviders/${sso}`, alice.token, undefined, {
        status: 404,
        code: 5,
      });
    });
  });

  describe("external group role mappings", () => {
    let idp: string;
    let dan: RegisteredPerson;
    let delegate: string;
    before(async () => {
      idp = (
        await ok<{ uid: string }>("POST", `/iam/v2/identityProviders/${acme}`, alice.token, idpBody("google"))
      ).uid;
      dan = await registeredPerson(wharf, "dan");
      // dan may manage providers and bind roles, and holds what `delegate` grants, nothing more.
      delegate = (
        await ok<{ uid: string }>("POST", `/iam/v2/roles/${acme}`, alice.token, {
          name: "idp-admin",
          capabilities: [
            "CAP_IAM_IDENTITY_PROVIDERS_CREATE",
            "CAP_IAM_IDENTITY_PROVIDERS_LIST",
            "CAP_IAM_IDENTITY_PROVIDERS_DELETE",
            "CAP_IAM_ROLE_BINDINGS_CREATE",
          ],
        })
      ).uid;
      await ok("POST", `/iam/v2/roleBindings/${acme}`, alice.token, {
        identityUid: dan.uid,
        roleUid: delegate,
      });
    });

    it("creates (scope defaults to the organization), refuses duplicates and other scopes", async () => {
      const m = await ok<Record<string, string>>(
        "POST",
        `/iam/v2/externalGroupRoleMappings/${idp}`,
        alice.token,
        {
          externalGroupId: "Admins",
          roleUid: VIEWER,
        },
      );
      assert.match(m.uid!, new RegExp(`^${idp}/[0-9a-f]{16}$`), "uid under the provider");
      assert.equal(m.identityProviderUid, idp, "provider");
      assert.equal(m.scope, acme, "scope = organization");
      await fails(
        "POST",
        `/iam/v2/externalGroupRoleMappings/${idp}`,
        alice.token,
        { externalGroupId: "Admins", roleUid: VIEWER, scope: acme },
        { status: 409, code: 6 },
      );
      const sub = (await ok<{ uid: string }>("POST", `/iam/v2/groups/${acme}`, alice.token, { name: "sub" }))
        .uid;
      await fails(
        "POST",
        `/iam/v2/externalGroupRoleMappings/${idp}`,
        alice.token,
        { externalGroupId: "x", roleUid: VIEWER, scope: sub },
        { status: 400, code: 3, field: "scope" },
      );
      await fails(
        "POST",
        `/iam/v2/externalGroupRoleMappings/${idp}`,
        alice.token,
        { roleUid: VIEWER },
        { status: 400, code: 3, field: "external_group_id" },
      );
      await fails(
        "POST",
        `/iam/v2/externalGroupRoleMappings/${idp}`,
        alice.token,
        { externalGroupId: "x" },
        { status: 400, code: 3, field: "role_uid" },
      );
      const listed = await ok<{ externalGroupRoleMappings: { uid: string }[]; totalCount: string }>(
        "GET",
        `/iam/v2/externalGroupRoleMappings?identity_provider_uid=${idp}&external_group_id=Admins`,
        alice.token,
      );
      assert.deepEqual(
        listed.externalGroupRoleMappings.map((x) => x.uid),
        [m.uid],
        "filtered list",
      );
      const got = await ok<Record<string, string>>(
        "GET",
        `/iam/v2/externalGroupRoleMappings/${m.uid}`,
        alice.token,
      );
      assert.equal(got.externalGroupId, "Admins", "get");
    });

    it("anti-escalation: the caller must hold every capability of the mapped role", async () => {
      await fails(
        "POST",
        `/iam/v2/externalGroupRoleMappings/${idp}`,
        dan.token,
        { externalGroupId: "escalate", roleUid: OWNER },
        { status: 403, code: 7 },
      );
      const okMapping = await ok<{ uid: string }>(
        "POST",
        `/iam/v2/externalGroupRoleMappings/${idp}`,
        dan.token,
        {
          externalGroupId: "delegates",
          roleUid: delegate,
        },
      );
      assert.match(okMapping.uid, /\//, "a role dan fully holds may be mapped");
      const mappedOnly = (
        await ok<{ uid: string }>("POST", `/iam/v2/roles/${acme}`, alice.token, {
          name: "mapped-only",
          capabilities: ["CAP_REPO_LIST"],
        })
      ).uid;
      await ok("POST", `/iam/v2/externalGroupRoleMappings/${idp}`, alice.token, {
        externalGroupId: "readers",
        roleUid: mappedOnly,
      });
      const inUse = await fails("DELETE", `/iam/v2/roles/${mappedOnly}`, alice.token, undefined, {
        status: 400,
        code: 9,
      });
      const used = (detail(inUse, "PreconditionFailure") as { violations: { type: string }[] }).violations;
      assert.equal(used[0]?.type, "RESOURCE_IN_USE", "a mapped role cannot be deleted");
    });

    it("batchDelete returns what it deleted, skips names already gone, refuses other providers' names", async () => {
      const a = (
        await ok<{ uid: string }>("POST", `/iam/v2/externalGroupRoleMappings/${idp}`, alice.token, {
          externalGroupId: "a",
          roleUid: VIEWER,
        })
      ).uid;
      const b = (
        await ok<{ uid: string }>("POST", `/iam/v2/externalGroupRoleMappings/${idp}`, alice.token, {
          externalGroupId: "b",
          roleUid: VIEWER,
        })
      ).uid;
      await ok("DELETE", `/iam/v2/externalGroupRoleMappings/${b}`, alice.token);
      const other = (
        await ok<{ uid: string }>("POST", `/iam/v2/identityProviders/${acme}`, alice.token, idpBody("other"))
      ).uid;
      await fails(
        "POST",
        "/iam/v2/externalGroupRoleMappings:batchDelete",
        alice.token,
        { parent: idp, names: [a, newChildUid(other)] },
        { status: 400, code: 3, field: "names[1]" },
      );
      const res = await ok<{ parent: string; externalGroupRoleMappings: { uid: string }[] }>(
        "POST",
        "/iam/v2/externalGroupRoleMappings:batchDelete",
        alice.token,
        { parent: idp, names: [a, b] },
      );
      assert.equal(res.parent, idp, "parent");
      assert.deepEqual(
        res.externalGroupRoleMappings.map((m) => m.uid),
        [a],
        "only a was still there",
      );
      await fails("GET", `/iam/v2/externalGroupRoleMappings/${a}`, alice.token, undefined, {
        status: 404,
        code: 5,
      });
    });
  });

  describe("account associations", () => {
    it("one per group (uid = group), validates every provider block, PATCH by mask, idempotent delete", async () => {
      const good = {
        name: "clouds",
        amazon: { account: "123456789012" },
        google: { projectId: "acme-prod-1", projectNumber: "998877" },
        azure: {
          tenantId: "6f1d3c4e-1111-4222-8333-944455556666",
          clientIds: { api: "0a1b2c3d-1111-4222-8333-944455556666" },
        },
        github: {
          appInstallations: { "12345": { installations: [{ installationId: "678", name: "acme" }] } },
        },
      };
      const bad: [unknown, string][] = [
        [{ ...good, name: "" }, "name"],
        [{ ...good, amazon: { account: "1234" } }, "amazon.account"],
        [{ ...good, google: { projectId: "Bad_Project" } }, "google.project_id"],
        [{ ...good, google: { projectNumber: "12a" } }, "google.project_number"],
        [{ ...good, azure: { tenantId: "nope" } }, "azure.tenant_id"],
        [{ ...good, azure: { ...good.azure, clientIds: { api: "nope" } } }, "azure.client_ids[api]"],
        [
          { ...good, github: { appInstallations: { "1": { installations: [{ installationId: "0" }] } } } },
          "github.app_installations[1].installations.installation_id",
        ],
        [
          { ...good, github: { appInstallations: { "0": { installations: [] } } } },
          "github.app_installations",
        ],
      ];
      for (const [body, field] of bad) {
        await fails("POST", `/iam/v2/accountAssociations/${acme}`, alice.token, body, {
          status: 400,
          code: 3,
          field,
        });
      }
      await fails("GET", `/iam/v2/accountAssociations/${acme}`, alice.token, undefined, {
        status: 404,
        code: 5,
      });

      const created = await ok<ResourceJson>(
        "POST",
        `/iam/v2/accountAssociations/${acme}`,
        alice.token,
        good,
      );
      assert.equal(created.uid, acme, "uid is the group's");
      assert.deepEqual(created.github, good.github, "github block round-trips (int64 as strings)");
      await fails("POST", `/iam/v2/accountAssociations/${acme}`, alice.token, good, { status: 409, code: 6 });

      const patched = await ok<ResourceJson>(
        "PATCH",
        `/iam/v2/accountAssociations/${acme}?updateMask=amazon,description`,
        alice.token,
        { description: "prod accounts" },
      );
      assert.equal(patched.amazon, undefined, "amazon removed by the mask");
      assert.equal(patched.description, "prod accounts", "description");
      assert.deepEqual(patched.google, good.google, "google kept");
      const partial = await ok<ResourceJson>("PATCH", `/iam/v2/accountAssociations/${acme}`, alice.token, {
        amazon: { account: "210987654321" },
      });
      assert.deepEqual(partial.amazon, { account: "210987654321" }, "amazon back");
      assert.deepEqual(partial.azure, good.azure, "azure untouched");
      await fails(
        "PATCH",
        `/iam/v2/accountAssociations/${acme}`,
        alice.token,
        { amazon: { account: "x" } },
        { status: 400, code: 3, field: "amazon.account" },
      );

      const list = await ok<{ associations: { uid: string }[]; totalCount: string }>(
        "GET",
        `/iam/v2/accountAssociations?uidp.descendants_of=${acme}`,
        alice.token,
      );
      assert.deepEqual(
        list.associations.map((a) => a.uid),
        [acme],
        "listed",
      );
      await ok("DELETE", `/iam/v2/accountAssociations/${acme}`, alice.token);
      await ok("DELETE", `/iam/v2/accountAssociations/${acme}`, alice.token);
      await fails("GET", `/iam/v2/accountAssociations/${acme}`, alice.token, undefined, {
        status: 404,
        code: 5,
      });
    });
  });

  describe("group invites and /auth/v1/register", () => {
    const register = (token: string, code: string) =>
      fetch(`${wharf.apiUrl}/auth/v1/register`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ code }),
      });
    const invite = async (body: Record<string, unknown>) =>
      ok<{
        uid: string;
        code: string;
        keyId: string;
        expirationTime: string;
        role?: Record<string, unknown>;
      }>("POST", `/iam/v2/groupInvites/${acme}`, alice.token, { roleUid: VIEWER, ttl: "3600s", ...body });
    const codes: string[] = [];

    it("creates an invite whose code is shown once; get and list hydrate the role, filter by key id", async () => {
      const created = await invite({ email: "Carol@Example.com", singleUse: true });
      codes.push(created.code);
      assert.match(created.code, /^wharf_inv_[A-Za-z0-9_-]{43}$/, "high-entropy opaque code");
      assert.match(created.keyId, /^[0-9a-f]{16}$/, "key id");
      assert.equal(created.role?.uid, VIEWER, "role hydrated");
      assert.equal(created.role?.name, "viewer", "role name");
      assert.ok(Array.isArray(created.role?.capabilities), "role capabilities listed");
      const got = await ok<Record<string, unknown>>(
        "GET",
        `/iam/v2/groupInvites/${created.uid}`,
        alice.token,
      );
      assert.equal(got.code, undefined, "no code on get");
      assert.equal(got.ttl, undefined, "ttl is input-only");
      assert.equal(got.email, "Carol@Example.com", "email");
      assert.equal(
        Date.parse(got.expirationTime as string) - Date.parse(got.createTime as string),
        3_600_000,
        "expiration = create + ttl",
      );
      const second = await invite({});
      codes.push(second.code);
      const byKey = await ok<{ invites: Record<string, unknown>[] }>(
        "GET",
        `/iam/v2/groupInvites?key_id=${created.keyId}`,
        alice.token,
      );
      assert.deepEqual(
        byKey.invites.map((i) => i.uid),
        [created.uid],
        "key id filter",
      );
      assert.equal(byKey.invites[0]?.code, undefined, "no code in lists");
      const all = await ok<{ invites: { uid: string }[] }>(
        "GET",
        `/iam/v2/groupInvites?uidp.children_of=${acme}`,
        alice.token,
      );
      assert.deepEqual(
        all.invites.map((i) => i.uid),
        [second.uid, created.uid],
        "newest first by default",
      );
    });

    it("refuses bad invites with INVALID_ARGUMENT naming the field", async () => {
      const foreign = await ok<{ uid: string }>("POST", `/iam/v2/roles/${globex}`, bob.token, {
        name: "globex-invitee",
        capabilities: ["CAP_REPO_LIST"],
      });
      const cases: [Record<string, unknown>, string][] = [
        [{ roleUid: "" }, "role_uid"],
        [{ roleUid: foreign.uid }, "role_uid"],
        [{ ttl: undefined }, "ttl"],
        [{ ttl: "0s" }, "ttl"],
        [{ ttl: "2592001s" }, "ttl"],
        [{ email: "not-an-email" }, "email"],
      ];
      for (const [body, field] of cases) {
        const full: Record<string, unknown> = { roleUid: VIEWER, ttl: "3600s", ...body };
        if (body.ttl === undefined && "ttl" in body) delete full.ttl;
        await fails("POST", `/iam/v2/groupInvites/${acme}`, alice.token, full, {
          status: 400,
          code: 3,
          field,
        });
      }
    });

    it("redeems: wrong email refused, the right person bound, single use, unknown codes generic", async () => {
      const [carolsCode] = codes;
      const dave = await registeredPerson(wharf, "dave-r", { email: "dave@example.com" });
      const carol = await registeredPerson(wharf, "carol", { email: "carol@example.com" });
      await expectError(await register(dave.token, carolsCode!), { status: 403, code: 7 });
      await expectError(await register(carol.token, "wharf_inv_unknown"), { status: 403, code: 7 });
      await expectError(await register(wharf.adminToken, carolsCode!), { status: 403, code: 7 });
      const res = await expectJson<{ identity: string; group: string; roleBinding: string }>(
        await register(carol.token, carolsCode!),
      );
      assert.equal(res.identity, carol.uid, "identity");
      assert.equal(res.group, acme, "group");
      assert.match(res.roleBinding, new RegExp(`^${acme}/[0-9a-f]{16}$`), "binding under the group");
      await expectJson(await wharf.api(`/iam/v2/groups/${acme}`, { token: carol.token }));
      const unknown = await expectError(await register(carol.token, carolsCode!), { status: 403, code: 7 });
      const again = await expectError(await register(carol.token, "wharf_inv_never-issued"), {
        status: 403,
        code: 7,
      });
      assert.equal(unknown.message, again.message, "a used code looks like one that never existed");

      // A reusable invite, redeemed twice by the same person: one binding, same uid.
      const reusable = codes[1]!;
      const first = await expectJson<{ roleBinding: string }>(await register(dave.token, reusable));
      const second = await expectJson<{ roleBinding: string }>(await register(dave.token, reusable));
      assert.equal(second.roleBinding, first.roleBinding, "idempotent binding");
      const codesInLogs = codes.filter((c) => JSON.stringify(wharf.logLines).includes(c));
      assert.deepEqual(codesInLogs, [], "invite codes are never logged");
    });

    it("only root-level identities may redeem", async () => {
      const { code } = await invite({});
      const ci = await ok<{ uid: string }>("POST", `/iam/v2/identities/${acme}`, alice.token, {
        name: "ci-bot",
        claimMatch: { issuer: "https://ci.example.com", subject: "bot" },
      });
      await expectError(await register(await wharf.tokenFor(ci.uid), code), { status: 403, code: 7 });
      await expectError(await register(alice.token, ""), { status: 400, code: 3, field: "code" });
    });

    it("concurrent redemptions of a single-use invite: exactly one wins", async () => {
      const { code } = await invite({ singleUse: true });
      const people = await Promise.all(
        ["erin", "frank", "gina", "hank"].map((n) => registeredPerson(wharf, n)),
      );
      const statuses = await Promise.all(people.map(async (p) => (await register(p.token, code)).status));
      assert.deepEqual(
        statuses.sort(),
        [200, 403, 403, 403],
        "one redemption succeeds, the others are refused",
      );
    });

    it("an expired invite answers FAILED_PRECONDITION", async () => {
      const { code, uid } = await invite({ ttl: "60s" });
      const ivan = await registeredPerson(wharf, "ivan");
      skewMs += 120_000;
      const body = await expectError(await register(ivan.token, code), { status: 400, code: 9 });
      assert.match(body.message, /invite expired/, "message says so");
      await ok("DELETE", `/iam/v2/groupInvites/${uid}`, alice.token);
      await ok("DELETE", `/iam/v2/groupInvites/${uid}`, alice.token);
      await fails("GET", `/iam/v2/groupInvites/${uid}`, alice.token, undefined, { status: 404, code: 5 });
    });
  });

  describe("terms", () => {
    it("accepts configured documents idempotently and lists the group's and its ancestors' acceptances", async () => {
      const team = (
        await ok<{ uid: string }>("POST", `/iam/v2/groups/${acme}`, alice.token, { name: "legal" })
      ).uid;
      const accepted = await ok<{ group: string; documentIds: string[] }>(
        "POST",
        `/iam/v2/terms/${acme}`,
        alice.token,
        {
          documentIds: ["sfdpa.v1", "sfdpa.v1"],
        },
      );
      assert.deepEqual(accepted, { group: acme, documentIds: ["sfdpa.v1"] }, "accept answer");
      await ok("POST", `/iam/v2/terms/${acme}`, alice.token, { documentIds: ["sfdpa.v1"] });
      await ok("POST", `/iam/v2/terms/${team}`, alice.token, { documentIds: ["custom.v2"] });
      const unknown = await fails(
        "POST",
        `/iam/v2/terms/${team}`,
        alice.token,
        { documentIds: ["guardener-tos.v1"] },
        { status: 400, code: 3, field: "document_ids" },
      );
      assert.match(unknown.message, /guardener-tos\.v1/, "names the unknown id");
      await fails(
        "POST",
        `/iam/v2/terms/${team}`,
        alice.token,
        { documentIds: [] },
        {
          status: 400,
          code: 3,
          field: "document_ids",
        },
      );
      const atTeam = await ok<{
        termsAcceptances: { docId: string; orgUid: string; acceptedBy: string }[];
        totalCount: string;
      }>("GET", `/iam/v2/terms/${team}`, alice.token);
      assert.deepEqual(
        atTeam.termsAcceptances.map((t) => [t.docId, t.orgUid, t.acceptedBy]).sort(),
        [
          ["custom.v2", team, alice.uid],
          ["sfdpa.v1", acme, alice.uid],
        ],
        "the group's and its ancestors' acceptances",
      );
      assert.equal(atTeam.totalCount, "2", "total");
      const page = await ok<{ termsAcceptances: unknown[]; nextPageToken: string }>(
        "GET",
        `/iam/v2/terms/${team}?page_size=1&order_by=create_time%20desc`,
        alice.token,
      );
      assert.equal(page.termsAcceptances.length, 1, "page size");
      assert.notEqual(page.nextPageToken, "", "next page token");
      const atOrg = await ok<{ termsAcceptances: { docId: string }[] }>(
        "GET",
        `/iam/v2/terms/${acme}`,
        alice.token,
      );
      assert.deepEqual(
        atOrg.termsAcceptances.map((t) => t.docId),
        ["sfdpa.v1"],
        "not the descendants'",
      );
      // Deleting the group takes its acceptances.
      await ok("DELETE", `/iam/v2/groups/${team}`, alice.token);
      assert.equal(
        (
          await wharf.store.termsAcceptances.list(
            { groupUids: [team] },
            { order: { field: "uid", desc: false }, limit: 5, skip: 0 },
          )
        ).total,
        0n,
        "acceptances deleted with the group",
      );
    });
  });

  describe("across organizations", () => {
    it("a member of one organization can neither read nor change another's federation resources", async () => {
      const idp = (
        await ok<{ uid: string }>(
          "POST",
          `/iam/v2/identityProviders/${globex}`,
          bob.token,
          idpBody("globex-sso"),
        )
      ).uid;
      const mapping = (
        await ok<{ uid: string }>("POST", `/iam/v2/externalGroupRoleMappings/${idp}`, bob.token, {
          externalGroupId: "g",
          roleUid: VIEWER,
        })
      ).uid;
      await ok("POST", `/iam/v2/accountAssociations/${globex}`, bob.token, { name: "globex-cloud" });
      const inv = (
        await ok<{ uid: string }>("POST", `/iam/v2/groupInvites/${globex}`, bob.token, {
          roleUid: VIEWER,
          ttl: "600s",
        })
      ).uid;
      await ok("POST", `/iam/v2/terms/${globex}`, bob.token, { documentIds: ["sfdpa.v1"] });

      const denied: Array<[string, string, unknown?]> = [
        ["GET", `/iam/v2/identityProviders/${idp}`],
        ["POST", `/iam/v2/identityProviders/${globex}`, idpBody("evil")],
        ["PATCH", `/iam/v2/identityProviders/${idp}`, { description: "x" }],
        ["DELETE", `/iam/v2/identityProviders/${idp}`],
        ["GET", `/iam/v2/externalGroupRoleMappings/${mapping}`],
        ["POST", `/iam/v2/externalGroupRoleMappings/${idp}`, { externalGroupId: "evil", roleUid: VIEWER }],
        ["DELETE", `/iam/v2/externalGroupRoleMappings/${mapping}`],
        ["POST", "/iam/v2/externalGroupRoleMappings:batchDelete", { parent: idp, names: [mapping] }],
        ["GET", `/iam/v2/accountAssociations/${globex}`],
        ["POST", `/iam/v2/accountAssociations/${globex}`, { name: "evil" }],
        ["PATCH", `/iam/v2/accountAssociations/${globex}`, { description: "x" }],
        ["DELETE", `/iam/v2/accountAssociations/${globex}`],
        ["GET", `/iam/v2/groupInvites/${inv}`],
        ["POST", `/iam/v2/groupInvites/${globex}`, { roleUid: VIEWER, ttl: "600s" }],
        ["DELETE", `/iam/v2/groupInvites/${inv}`],
        ["GET", `/iam/v2/terms/${globex}`],
        ["POST", `/iam/v2/terms/${globex}`, { documentIds: ["skills-tos.v1"] }],
      ];
      for (const [method, path, body] of denied) {
        await fails(method, path, alice.token, body, { status: 403, code: 7 });
      }
      for (const list of [
        "identityProviders",
        "externalGroupRoleMappings",
        "accountAssociations",
        "groupInvites",
      ]) {
        const res = await ok<{ totalCount: string }>(
          "GET",
          `/iam/v2/${list}?uidp.descendants_of=${globex}`,
          alice.token,
        );
        assert.equal(res.totalCount, "0", `${list}: nothing of globex is listed`);
      }
      assert.equal(
        (await wharf.store.identityProviders.get(idp))?.description,
        "",
        "bob's provider unchanged",
      );
      assert.notEqual(await wharf.store.externalGroupRoleMappings.get(mapping), undefined, "mapping kept");
      assert.notEqual(await wharf.store.groupInvites.get(inv), undefined, "invite kept");
      assert.notEqual(await wharf.store.accountAssociations.get(globex), undefined, "association kept");
    });
  });

  describe("identities", () => {
    it("revoking an identity (its role binding first, then the identity): access is gone within seconds", async () => {
      const repo = await wharf.create(`/registry/v2/repos/${globex}`, { name: "app" }, bob.token);
      const puller = await ok<{ uid: string }>("POST", `/iam/v2/identities/${globex}`, bob.token, {
        name: "pull-token",
        claimMatch: { issuer: "https://ci.example.com", subject: "puller" },
      });
      const binding = await ok<{ uid: string }>("POST", `/iam/v2/roleBindings/${globex}`, bob.token, {
        identityUid: puller.uid,
        roleUid: VIEWER,
      });
      const token = await wharf.tokenFor(puller.uid);
      const read = () => wharf.api(`/registry/v2/repos/${repo}`, { token });
      assert.equal((await read()).status, 200, "the pull identity reads the repo");
      // The spec's order: a bound identity cannot be deleted; its binding goes first.
      await fails("DELETE", `/iam/v2/identities/${puller.uid}`, bob.token, undefined, {
        status: 400,
        code: 9,
      });
      assert.equal((await read()).status, 200, "the refused delete changed nothing");
      await ok("DELETE", `/iam/v2/roleBindings/${binding.uid}`, bob.token);
      assert.equal(await statusWithin(5000, 403, read), 403, "access revoked within 5 s");
      await ok("DELETE", `/iam/v2/identities/${puller.uid}`, bob.token);
      await fails("GET", `/iam/v2/identities/${puller.uid}`, bob.token, undefined, {
        status: 404,
        code: 5,
      });
    });

    it(":lookupIdentity answers the deterministic registered uid to any authenticated caller", async () => {
      const carl = await registeredPerson(wharf, "carl");
      const res = await ok<{ uid: string }>(
        "GET",
        "/iam/v2/identities:lookupIdentity?issuer=https%3A%2F%2Faccounts.example.com&subject=12345",
        carl.token,
      );
      assert.equal(
        res.uid,
        registeredIdentityUid("https://accounts.example.com", "12345"),
        "deterministic uid",
      );
      await fails("GET", "/iam/v2/identities:lookupIdentity?issuer=nope&subject=1", carl.token, undefined, {
        status: 400,
        code: 3,
        field: "issuer",
      });
      await fails(
        "GET",
        "/iam/v2/identities:lookupIdentity?issuer=https%3A%2F%2Faccounts.example.com",
        carl.token,
        undefined,
        { status: 400, code: 3, field: "subject" },
      );
      const anonymous = await wharf.api(
        "/iam/v2/identities:lookupIdentity?issuer=https%3A%2F%2Fa.example&subject=1",
      );
      await expectError(anonymous, { status: 401, code: 16 });
    });
  });

  describe("/auth/v1/ok", () => {
    it("says who the caller is and what their bindings give, within the token's restrictions", async () => {
      const me = await expectJson<{
        identity: { uid: string; name: string; email: string };
        groups: { uid: string; name: string; role: { name: string }; capabilities: string[] }[];
      }>(await wharf.api("/auth/v1/ok", { token: alice.token }));
      assert.deepEqual(
        me.identity,
        { uid: alice.uid, name: "alice", email: "alice@example.com" },
        "identity",
      );
      const atAcme = me.groups.find((g) => g.uid === acme);
      assert.equal(atAcme?.role.name, "owner", "owner of acme");
      assert.equal(atAcme?.name, "acme", "group name");
      assert.ok(atAcme?.capabilities.includes("repo.list"), "short capability names");

      const issuer = createIssuer({
        store: wharf.store,
        issuerUrl: wharf.apiUrl,
        clock: { now: () => Date.now() + skewMs },
      });
      const team = (
        await ok<{ uid: string }>("POST", `/iam/v2/groups/${acme}`, alice.token, { name: "whoami" })
      ).uid;
      const narrowed = await issuer.mint({
        subject: alice.uid,
        audience: wharf.apiUrl,
        ttlSeconds: 600,
        extraClaims: { scope: [team], cap: ["repo.list"] },
      });
      const restricted = await expectJson<{ groups: { uid: string; capabilities: string[] }[] }>(
        await wharf.api("/auth/v1/ok", { token: narrowed }),
      );
      assert.deepEqual(
        restricted.groups.map((g) => [g.uid, g.capabilities]),
        [[team, ["repo.list"]]],
        "the token's scope and capability restrictions apply",
      );
      const admin = await expectJson<{ admin?: boolean }>(
        await wharf.api("/auth/v1/ok", { token: wharf.adminToken }),
      );
      assert.equal(admin.admin, true, "the administrator is said to be one");
      await expectError(await wharf.api("/auth/v1/ok"), { status: 401, code: 16 });
    });
  });
});
