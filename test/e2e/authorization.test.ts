import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createIssuer } from "../../src/auth/issuer.js";
import { builtInRoleUid } from "../../src/authz/built-in-roles.js";
import { systemClock } from "../../src/core/clock.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { registeredPerson } from "../support/registered-person.js";
import { seedManifests } from "../support/seed-manifests.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

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

describe("authentication and authorization", () => {
  let wharf: TestServer;
  let alice: { uid: string; token: string };
  let bob: { uid: string; token: string };
  let acme: string;
  let globex: string;
  let globexRepo: string;
  let globexTag: string;

  before(async () => {
    wharf = await startTestServer();
    alice = await registeredPerson(wharf, "alice");
    bob = await registeredPerson(wharf, "bob");
    // Any authenticated identity may create an organization and becomes its owner.
    acme = (
      await expectJson<{ uid: string }>(
        await wharf.api("/iam/v2/groups", { method: "POST", token: alice.token, body: { name: "acme" } }),
      )
    ).uid;
    globex = (
      await expectJson<{ uid: string }>(
        await wharf.api("/iam/v2/groups", { method: "POST", token: bob.token, body: { name: "globex" } }),
      )
    ).uid;
    globexRepo = await wharf.create(`/registry/v2/repos/${globex}`, { name: "secret" }, bob.token);
    await seedManifests(wharf.store, globexRepo, [`sha256:${"a".repeat(64)}`, `sha256:${"b".repeat(64)}`]);
    globexTag = (
      await expectJson<{ uid: string }>(
        await wharf.api(`/registry/v2/tags/${globexRepo}`, {
          method: "POST",
          token: bob.token,
          body: { name: "latest", digest: `sha256:${"a".repeat(64)}` },
        }),
      )
    ).uid;
  });
  after(() => wharf.close());
  const repoAsAlice = () => wharf.api(`/registry/v2/repos/${globexRepo}`, { token: alice.token });

  it("rejects missing, malformed, foreign and expired tokens with UNAUTHENTICATED", async () => {
    const missing = await wharf.api("/iam/v2/groups");
    await expectError(missing, { status: 401, code: 16 });
    await expectError(await wharf.api("/iam/v2/groups", { token: "not-a-jwt" }), { status: 401, code: 16 });
    const tampered = `${alice.token.slice(0, -4)}AAAA`;
    await expectError(await wharf.api("/iam/v2/groups", { token: tampered }), { status: 401, code: 16 });
    const otherAudience = await wharf.tokenFor(alice.uid).then(() =>
      createIssuer({ store: wharf.store, issuerUrl: wharf.apiUrl, clock: systemClock }).mint({
        subject: alice.uid,
        audience: "http://registry.example.com",
        ttlSeconds: 600,
      }),
    );
    await expectError(await wharf.api("/iam/v2/groups", { token: otherAudience }), { status: 401, code: 16 });
    // Issued two hours ago for one hour: well past the verifier's clock-skew tolerance.
    const past = createIssuer({
      store: wharf.store,
      issuerUrl: wharf.apiUrl,
      clock: { now: () => Date.now() - 7_200_000 },
    });
    const expired = await past.mint({ subject: alice.uid, audience: wharf.apiUrl, ttlSeconds: 3600 });
    await expectError(await wharf.api("/iam/v2/groups", { token: expired }), { status: 401, code: 16 });
  });

  it("binds the creator of an organization as its owner", async () => {
    const bindings = await expectJson<{ roleBindings: Array<{ identityUid: string; roleUid: string }> }>(
      await wharf.api(`/iam/v2/roleBindings?group=${acme}`, { token: alice.token }),
    );
    assert.deepEqual(
      bindings.roleBindings.map((b) => [b.identityUid, b.roleUid]),
      [[alice.uid, builtInRoleUid("owner")]],
    );
  });

  it("keeps one organization out of another's groups, repos and tags", async () => {
    // Reads
    await expectError(await wharf.api(`/iam/v2/groups/${globex}`, { token: alice.token }), {
      status: 403,
      code: 7,
    });
    await expectError(await wharf.api(`/registry/v2/repos/${globexRepo}`, { token: alice.token }), {
      status: 403,
      code: 7,
    });
    await expectError(await wharf.api(`/registry/v2/tags/${globexTag}`, { token: alice.token }), {
      status: 403,
      code: 7,
    });
    const groups = await expectJson<{ groups?: Array<{ uid: string }>; totalCount: string }>(
      await wharf.api("/iam/v2/groups", { token: alice.token }),
    );
    assert.deepEqual(
      (groups.groups ?? []).map((g) => g.uid),
      [acme],
    );
    const repos = await expectJson<{ repos?: unknown[]; totalCount: string }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${globex}`, { token: alice.token }),
    );
    assert.equal(repos.repos, undefined);
    assert.equal(repos.totalCount, "0");
    const tags = await expectJson<{ tags?: unknown[]; totalCount: string }>(
      await wharf.api(`/registry/v2/tags?uidp.children_of=${globexRepo}`, { token: alice.token }),
    );
    assert.equal(tags.totalCount, "0");
    // Writes, each refused, binding herself into the other organization included.
    const writes: Array<[string, string, unknown?]> = [
      ["PATCH", `/registry/v2/repos/${globexRepo}`, { description: "x" }],
      ["POST", `/registry/v2/repos/${globex}`, { name: "evil" }],
      ["POST", `/registry/v2/tags/${globexRepo}`, { name: "latest", digest: `sha256:${"b".repeat(64)}` }],
      ["DELETE", `/registry/v2/tags/${globexTag}`],
      ["DELETE", `/iam/v2/groups/${globex}`],
      ["POST", `/iam/v2/groups/${globex}`, { name: "sub" }],
      [
        "POST",
        `/iam/v2/roleBindings/${globex}`,
        { identityUid: alice.uid, roleUid: builtInRoleUid("owner") },
      ],
    ];
    for (const [method, path, body] of writes) {
      await expectError(await wharf.api(path, { method, token: alice.token, body }), {
        status: 403,
        code: 7,
      });
    }
    // Nothing changed on bob's side.
    const tag = await expectJson<{ digest: string }>(
      await wharf.api(`/registry/v2/tags/${globexTag}`, { token: bob.token }),
    );
    assert.equal(tag.digest, `sha256:${"a".repeat(64)}`);
  });

  it("grants a viewer reads but not writes, and revokes within seconds when the binding is deleted", async () => {
    const binding = await expectJson<{ uid: string }>(
      await wharf.api(`/iam/v2/roleBindings/${globex}`, {
        method: "POST",
        token: bob.token,
        body: { identityUid: alice.uid, roleUid: builtInRoleUid("viewer") },
      }),
    );
    await expectJson(await wharf.api(`/registry/v2/repos/${globexRepo}`, { token: alice.token }));
    await expectError(
      await wharf.api(`/registry/v2/repos/${globexRepo}`, {
        method: "PATCH",
        token: alice.token,
        body: { description: "x" },
      }),
      { status: 403, code: 7 },
    );
    await expectJson(
      await wharf.api(`/iam/v2/roleBindings/${binding.uid}`, { method: "DELETE", token: bob.token }),
    );
    assert.equal(
      await statusWithin(5000, 403, repoAsAlice),
      403,
      "access revoked within 5 s of deleting the binding",
    );
  });

  it("revokes within seconds when another process deletes the binding (no local invalidation)", async () => {
    const binding = await expectJson<{ uid: string }>(
      await wharf.api(`/iam/v2/roleBindings/${globex}`, {
        method: "POST",
        token: bob.token,
        body: { identityUid: alice.uid, roleUid: builtInRoleUid("viewer") },
      }),
    );
    await expectJson(await wharf.api(`/registry/v2/repos/${globexRepo}`, { token: alice.token }));
    // Straight to the store, as a second server process sharing the database would.
    assert.equal(await wharf.store.roleBindings.delete(binding.uid), true);
    assert.equal(await statusWithin(5000, 403, repoAsAlice), 403, "access revoked within 5 s");
  });
});
