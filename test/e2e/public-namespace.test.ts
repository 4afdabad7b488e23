import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ConfigError, loadConfig } from "../../src/config/config.js";
import { ErrorInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { GroupsService } from "../../src/gen/platform/iam/v2/groups_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { onOneEngine } from "../support/databases.js";
import { registeredPerson } from "../support/registered-person.js";
import { pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** Organizations (root groups) named `name`. */
async function orgsNamed(wharf: TestServer, name: string): Promise<{ uid: string }[]> {
  const list = await expectJson<{ groups?: { uid: string }[] }>(
    await wharf.api(`/iam/v2/groups?name=${name}`, { token: wharf.adminToken }),
  );
  return (list.groups ?? []).filter((g) => !g.uid.includes("/"));
}

const RESERVED = { status: 403, code: 7, reason: "RESERVED_NAME" } as const;

/**
 * The public namespace's organization name is reserved: nobody but the platform administrator can
 * create it or rename an organization to it (so nobody can squat on what everyone pulls anonymously),
 * over REST and gRPC; the administrator's public organization serves anonymous pulls.
 */
onOneEngine("the public namespace is reserved", (db) => {
  let wharf: TestServer;
  let alice: { uid: string; token: string };

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer(databaseUrl ? { databaseUrl } : {});
    alice = await registeredPerson(wharf, "alice");
  });
  after(() => wharf?.close());

  it("a user cannot create the organization `public`: PERMISSION_DENIED, reason RESERVED_NAME, nothing created", async () => {
    const body = await expectError(
      await wharf.api("/iam/v2/groups", { method: "POST", token: alice.token, body: { name: "public" } }),
      RESERVED,
    );
    assert.match(body.message, /"public" is reserved for the public namespace/);
    assert.deepEqual(await orgsNamed(wharf, "public"), []);
    const bindings = await expectJson<{ roleBindings?: unknown[] }>(
      await wharf.api(`/iam/v2/roleBindings?identity=${alice.uid}`, { token: wharf.adminToken }),
    );
    assert.deepEqual(bindings.roleBindings ?? [], [], "alice owns nothing");
  });

  it("a user cannot rename their organization to `public`; the name is kept", async () => {
    const own = await wharf.create("/iam/v2/groups", { name: "alice-org" }, alice.token);
    for (const mask of ["", "?update_mask=name"]) {
      await expectError(
        await wharf.api(`/iam/v2/groups/${own}${mask}`, {
          method: "PATCH",
          token: alice.token,
          body: { name: "public" },
        }),
        RESERVED,
      );
    }
    const kept = await expectJson<{ name: string }>(
      await wharf.api(`/iam/v2/groups/${own}`, { token: alice.token }),
    );
    assert.equal(kept.name, "alice-org");
    // Only the organization name is reserved: a folder may be called `public`, and be renamed to it.
    const folder = await wharf.create(`/iam/v2/groups/${own}`, { name: "public" }, alice.token);
    const other = await wharf.create(`/iam/v2/groups/${own}`, { name: "internal" }, alice.token);
    await wharf.api(`/iam/v2/groups/${folder}`, { method: "DELETE", token: alice.token }).then(expectJson);
    const renamed = await expectJson<{ name: string }>(
      await wharf.api(`/iam/v2/groups/${other}`, {
        method: "PATCH",
        token: alice.token,
        body: { name: "public" },
      }),
    );
    assert.equal(renamed.name, "public");
  });

  it("gRPC: the same refusal carries ErrorInfo reason RESERVED_NAME", async () => {
    const client = createClient(GroupsService, createGrpcTransport({ baseUrl: wharf.apiUrl }));
    const err = await client
      .createGroup(
        { parent: "", group: { name: "public" } },
        { headers: { authorization: `Bearer ${alice.token}` } },
      )
      .catch((e: unknown) => e);
    assert.ok(err instanceof ConnectError, String(err));
    assert.equal(err.code, Code.PermissionDenied);
    assert.equal(err.findDetails(ErrorInfoSchema)[0]?.reason, "RESERVED_NAME");
    assert.deepEqual(await orgsNamed(wharf, "public"), []);
  });

  it("the administrator creates it; then anyone pulls its latest anonymously", async () => {
    const created = await expectJson<{ uid: string; name: string }>(
      await wharf.api("/iam/v2/groups", {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "public" },
      }),
    );
    assert.equal(created.name, "public");
    const owners = await expectJson<{ roleBindings?: unknown[] }>(
      await wharf.api(`/iam/v2/roleBindings?group=${created.uid}`, { token: wharf.adminToken }),
    );
    assert.deepEqual(owners.roleBindings ?? [], [], "the administrator needs no owner binding");
    // A second one cannot exist (names are unique per parent), so nobody else owns `public` now.
    await expectError(
      await wharf.api("/iam/v2/groups", {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "public" },
      }),
      { status: 409, code: 6 },
    );
    await expectError(
      await wharf.api("/iam/v2/groups", { method: "POST", token: alice.token, body: { name: "public" } }),
      RESERVED,
    );

    const image = await pushImage(wharf, "public/img", "latest", await wharf.registryToken(), "public image");
    const token = await expectJson<{ token: string }>(
      await wharf.registry("/token?scope=repository:public/img:pull&service=wharf"),
    );
    const manifest = await wharf.registry("/v2/public/img/manifests/latest", {
      token: token.token,
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    });
    assert.equal(manifest.status, 200);
    assert.deepEqual(Buffer.from(await manifest.arrayBuffer()), image.manifest);
  });
});

describe("the reserved name follows --public-namespace", () => {
  let wharf: TestServer;
  let bob: { uid: string; token: string };
  before(async () => {
    wharf = await startTestServer({ config: { publicNamespace: "images" } });
    bob = await registeredPerson(wharf, "bob");
  });
  after(() => wharf?.close());

  it("reserves the configured name only", async () => {
    await expectError(
      await wharf.api("/iam/v2/groups", { method: "POST", token: bob.token, body: { name: "images" } }),
      RESERVED,
    );
    const plain = await wharf.create("/iam/v2/groups", { name: "public" }, bob.token);
    assert.ok(plain, "`public` is an ordinary name when another namespace is configured");
  });

  it("refuses a --public-namespace that could not be an organization name", () => {
    for (const name of ["Public", "my org", "a--", "x".repeat(64)]) {
      assert.throws(
        () => loadConfig({ publicNamespace: name }, {}),
        (err: unknown) =>
          err instanceof ConfigError && /--public-namespace .* must be 1 to 63 characters/.test(err.message),
        name,
      );
    }
  });
});
