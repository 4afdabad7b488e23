import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { detail, expectError, expectJson } from "../support/api-assertions.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("IAM v2 over REST", () => {
  let wharf: TestServer;
  let org: string;
  before(async () => {
    wharf = await startTestServer();
    const group = await expectJson<{ uid: string }>(
      await wharf.api("/iam/v2/groups", { method: "POST", token: wharf.adminToken, body: { name: "acme" } }),
    );
    org = group.uid;
  });
  after(() => wharf.close());

  it("creates a root organization with a 40-hex uid and RFC 3339 millisecond timestamps", async () => {
    const res = await wharf.api(`/iam/v2/groups/${org}`, { token: wharf.adminToken });
    const group = await expectJson<Record<string, string>>(res);
    assert.match(group.uid!, /^[0-9a-f]{40}$/);
    assert.equal(group.name, "acme");
    assert.match(group.createTime!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it("nests groups and refuses a duplicate sibling name with ALREADY_EXISTS", async () => {
    const child = await expectJson<{ uid: string }>(
      await wharf.api(`/iam/v2/groups/${org}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "team" },
      }),
    );
    assert.match(child.uid, new RegExp(`^${org}/[0-9a-f]{16}$`));
    await expectError(
      await wharf.api(`/iam/v2/groups/${org}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "team" },
      }),
      { status: 409, code: 6 },
    );
    const list = await expectJson<{ groups: Array<{ uid: string }>; totalCount: string }>(
      await wharf.api(`/iam/v2/groups?uidp.children_of=${org}`, { token: wharf.adminToken }),
    );
    assert.deepEqual(
      list.groups.map((g) => g.uid),
      [child.uid],
    );
    assert.equal(list.totalCount, "1");
  });

  it("answers the spec's exact error for an identity created with an empty body", async () => {
    const res = await wharf.api(`/iam/v2/identities/${org}`, {
      method: "POST",
      token: wharf.adminToken,
      body: {},
    });
    const body = await expectError(res, { status: 400, code: 3, reason: "INVALID_ARGUMENT", field: "name" });
    assert.equal(body.message, 'Invalid argument: name: name must match "^[a-z0-9 ._-]{1,}$"');
    assert.equal(detail(body, "ErrorInfo")?.domain, "iam.wharf.dev");
    const violations = (detail(body, "BadRequest") as { fieldViolations: Array<Record<string, string>> })
      .fieldViolations;
    assert.deepEqual(violations[0], { field: "name", description: 'name must match "^[a-z0-9 ._-]{1,}$"' });
  });

  it("creates, reads, patches and deletes an assumable identity", async () => {
    const created = await expectJson<{ uid: string; claimMatch: Record<string, string> }>(
      await wharf.api(`/iam/v2/identities/${org}`, {
        method: "POST",
        token: wharf.adminToken,
        body: {
          name: "ci-bot",
          description: "release pipeline",
          claimMatch: { issuer: "https://token.actions.example.com", subjectPattern: "repo:acme/.*" },
        },
      }),
    );
    assert.match(created.uid, new RegExp(`^${org}/[0-9a-f]{16}$`));
    assert.deepEqual(created.claimMatch, {
      issuer: "https://token.actions.example.com",
      subjectPattern: "repo:acme/.*",
    });

    const patched = await expectJson<Record<string, unknown>>(
      await wharf.api(`/iam/v2/identities/${created.uid}`, {
        method: "PATCH",
        token: wharf.adminToken,
        body: { description: "nightly pipeline" },
      }),
    );
    assert.equal(patched.description, "nightly pipeline");
    assert.equal(patched.name, "ci-bot", "fields absent from the body are unchanged");
    assert.ok(patched.claimMatch, "relationship kept");

    await expectError(
      await wharf.api(`/iam/v2/identities/${org}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "bad", claimMatch: { issuer: "https://x.example.com", subjectPattern: "([" } },
      }),
      { status: 400, code: 3, field: "claim_match.subject_pattern" },
    );

    await expectJson(
      await wharf.api(`/iam/v2/identities/${created.uid}`, { method: "DELETE", token: wharf.adminToken }),
    );
    await expectError(await wharf.api(`/iam/v2/identities/${created.uid}`, { token: wharf.adminToken }), {
      status: 404,
      code: 5,
    });
  });

  it("lists built-in roles with deterministic uids and (built-in) descriptions, read-only", async () => {
    const list = await expectJson<{
      roles: Array<{ uid: string; name: string; description: string; capabilities: string[] }>;
    }>(await wharf.api("/iam/v2/roles?page_size=200", { token: wharf.adminToken }));
    for (const name of [
      "viewer",
      "editor",
      "owner",
      "registry.pull",
      "registry.push",
      "registry.pull_token_creator",
    ]) {
      const role = list.roles.find((r) => r.name === name);
      assert.ok(role, `built-in ${name} listed`);
      assert.equal(role.uid, builtInRoleUid(name));
      assert.match(role.description, /\(built-in\)$/);
      assert.ok(
        role.capabilities.every((c) => c.startsWith("CAP_")),
        "capabilities as enum names",
      );
    }
    const viewer = builtInRoleUid("viewer");
    await expectError(
      await wharf.api(`/iam/v2/roles/${viewer}`, { method: "DELETE", token: wharf.adminToken }),
      { status: 400, code: 9 },
    );
  });

  it("manages custom roles; a bound role cannot be deleted", async () => {
    const role = await expectJson<{ uid: string; capabilities: string[] }>(
      await wharf.api(`/iam/v2/roles/${org}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "tagger", capabilities: ["CAP_TAG_CREATE", "CAP_TAG_LIST", "CAP_TAG_LIST"] },
      }),
    );
    assert.deepEqual(role.capabilities, ["CAP_TAG_CREATE", "CAP_TAG_LIST"]);
    await expectError(
      await wharf.api(`/iam/v2/roles/${org}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "empty" },
      }),
      { status: 400, code: 3, field: "capabilities" },
    );
    const identity = await expectJson<{ uid: string }>(
      await wharf.api(`/iam/v2/identities/${org}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "tagger-bot", claimMatch: { issuer: "https://ci.example.com", subject: "bot" } },
      }),
    );
    const binding = await expectJson<{ uid: string }>(
      await wharf.api(`/iam/v2/roleBindings/${org}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { identityUid: identity.uid, roleUid: role.uid },
      }),
    );
    type Times = { roleUid: string; createTime: string; updateTime: string };
    const read = async () =>
      expectJson<Times>(await wharf.api(`/iam/v2/roleBindings/${binding.uid}`, { token: wharf.adminToken }));
    const created = await read();
    assert.equal(created.updateTime, created.createTime, "a new binding's updateTime is its createTime");
    const patchRole = async (roleUid: string) =>
      expectJson<Times>(
        await wharf.api(`/iam/v2/roleBindings/${binding.uid}`, {
          method: "PATCH",
          token: wharf.adminToken,
          body: { roleUid },
        }),
      );
    const moved = await patchRole(builtInRoleUid("viewer"));
    assert.equal(moved.createTime, created.createTime, "an update keeps createTime");
    assert.ok(Date.parse(moved.updateTime) >= Date.parse(created.updateTime), "and sets updateTime");
    assert.deepEqual(await read(), moved, "Get answers what the update answered");
    await patchRole(role.uid);
    const blocked = await expectError(
      await wharf.api(`/iam/v2/roles/${role.uid}`, { method: "DELETE", token: wharf.adminToken }),
      { status: 400, code: 9, reason: "FAILED_PRECONDITION" },
    );
    assert.ok(detail(blocked, "PreconditionFailure"));
    // The identity cannot go while its binding references it (spec: delete the binding first).
    await expectError(
      await wharf.api(`/iam/v2/identities/${identity.uid}`, { method: "DELETE", token: wharf.adminToken }),
      { status: 400, code: 9, reason: "FAILED_PRECONDITION" },
    );
    await expectJson(
      await wharf.api(`/iam/v2/roleBindings/${binding.uid}`, { method: "DELETE", token: wharf.adminToken }),
    );
    await expectError(await wharf.api(`/iam/v2/roleBindings/${binding.uid}`, { token: wharf.adminToken }), {
      status: 404,
      code: 5,
    });
    await expectJson(
      await wharf.api(`/iam/v2/identities/${identity.uid}`, { method: "DELETE", token: wharf.adminToken }),
    );
    // Idempotent: deleting again still succeeds.
    await expectJson(
      await wharf.api(`/iam/v2/roleBindings/${binding.uid}`, { method: "DELETE", token: wharf.adminToken }),
    );
    await expectJson(
      await wharf.api(`/iam/v2/roles/${role.uid}`, { method: "DELETE", token: wharf.adminToken }),
    );
  });

  it("hydrates role bindings and batch-creates up to 25 atomically", async () => {
    const identities: string[] = [];
    for (const name of ["one", "two"]) {
      const id = await expectJson<{ uid: string }>(
        await wharf.api(`/iam/v2/identities/${org}`, {
          method: "POST",
          token: wharf.adminToken,
          body: {
            name,
            description: `identity ${name}`,
            claimMatch: { issuer: "https://ci.example.com", subject: name },
          },
        }),
      );
      identities.push(id.uid);
    }
    const viewer = builtInRoleUid("viewer");
    const single = await expectJson<Record<string, Record<string, string>>>(
      await wharf.api(`/iam/v2/roleBindings/${org}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { identityUid: identities[0], roleUid: viewer },
      }),
    );
    assert.deepEqual(single.identity, {
      uid: identities[0],
      name: "one",
      description: "identity one",
      subject: "one",
      issuer: "https://ci.example.com",
    });
    assert.deepEqual(single.group, { uid: org, name: "acme" });
    assert.deepEqual(single.role, { uid: viewer, name: "viewer", description: "Viewer Role (built-in)" });

    // A batch whose second entry is a duplicate of an existing binding writes nothing.
    const failing = await wharf.api("/iam/v2/roleBindings:batchCreate", {
      method: "POST",
      token: wharf.adminToken,
      body: {
        parent: org,
        roleUid: viewer,
        requests: [
          { roleBinding: { identityUid: identities[1] } },
          { roleBinding: { identityUid: identities[0] } },
        ],
      },
    });
    await expectError(failing, { status: 409, code: 6 });
    const afterFailure = await expectJson<{ totalCount: string }>(
      await wharf.api(`/iam/v2/roleBindings?identity=${identities[1]}`, { token: wharf.adminToken }),
    );
    assert.equal(afterFailure.totalCount, "0", "nothing of the failed batch was written");

    const batch = await expectJson<{ roleBindings: Array<{ identityUid: string; roleUid: string }> }>(
      await wharf.api("/iam/v2/roleBindings:batchCreate", {
        method: "POST",
        token: wharf.adminToken,
        body: { parent: org, roleUid: viewer, requests: [{ roleBinding: { identityUid: identities[1] } }] },
      }),
    );
    assert.deepEqual(
      batch.roleBindings.map((b) => [b.identityUid, b.roleUid]),
      [[identities[1], viewer]],
    );
    const tooMany = Array.from({ length: 26 }, () => ({ roleBinding: { identityUid: identities[1] } }));
    await expectError(
      await wharf.api("/iam/v2/roleBindings:batchCreate", {
        method: "POST",
        token: wharf.adminToken,
        body: { parent: org, roleUid: viewer, requests: tooMany },
      }),
      { status: 400, code: 3, field: "requests" },
    );
  });

  it("refuses to delete a group that still has repos, with RESOURCE_NOT_EMPTY", async () => {
    const group = await expectJson<{ uid: string }>(
      await wharf.api(`/iam/v2/groups/${org}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "busy" },
      }),
    );
    const repo = await expectJson<{ uid: string }>(
      await wharf.api(`/registry/v2/repos/${group.uid}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "app" },
      }),
    );
    const body = await expectError(
      await wharf.api(`/iam/v2/groups/${group.uid}`, { method: "DELETE", token: wharf.adminToken }),
      {
        status: 400,
        code: 9,
        reason: "FAILED_PRECONDITION",
      },
    );
    assert.match(body.message, /^Precondition failed: /);
    const failure = detail(body, "PreconditionFailure") as { violations: Array<{ type: string }> };
    assert.equal(failure.violations[0]?.type, "RESOURCE_NOT_EMPTY");
    await expectJson(
      await wharf.api(`/registry/v2/repos/${repo.uid}`, { method: "DELETE", token: wharf.adminToken }),
    );
    await expectJson(
      await wharf.api(`/iam/v2/groups/${group.uid}`, { method: "DELETE", token: wharf.adminToken }),
    );
    const gone = await expectError(
      await wharf.api(`/iam/v2/groups/${group.uid}`, { token: wharf.adminToken }),
      {
        status: 404,
        code: 5,
      },
    );
    assert.deepEqual(detail(gone, "ResourceInfo"), {
      "@type": "type.googleapis.com/google.rpc.ResourceInfo",
      resourceType: "group",
      resourceName: group.uid,
    });
  });
});
