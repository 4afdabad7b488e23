import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { BadRequestSchema, ErrorInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { GroupsService } from "../../src/gen/platform/iam/v2/groups_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { onOneEngine } from "../support/databases.js";
import { writeImageLayout } from "../support/oci-layout.js";
import { ociErrorOf, pushImage, uploadBlob } from "../support/registry-push.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

/** Names no group may have: each breaks the registry path-component rule or its length range. */
const BAD_NAMES = [
  "my org",
  "..",
  "A",
  "Acme",
  "a--",
  "-a",
  "a__b_",
  "a___b",
  "a/b",
  ".a",
  "",
  "x".repeat(64),
] as const;

/** Names every group may have, all pushable: `a` and `ab` included (no minimum beyond one character). */
const GOOD_NAMES = ["a", "ab", "a.b", "a__b", "a---b", "a_b", "9", "x".repeat(63)] as const;

/**
 * Group (organization and folder) names are registry path components of 1 to 63 characters, on
 * create and rename, over REST and gRPC; the names a push would create follow the same rule, and
 * every accepted name can be pushed to.
 */
onOneEngine("group names are registry path components", (db) => {
  let wharf: TestServer;
  let org: string;
  let registryToken: string;

  /** Groups whose name is `name`, anywhere. */
  async function groupsNamed(name: string): Promise<number> {
    const list = await expectJson<{ groups?: unknown[] }>(
      await wharf.api(`/iam/v2/groups?name=${encodeURIComponent(name)}`, { token: wharf.adminToken }),
    );
    return list.groups?.length ?? 0;
  }

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer(databaseUrl ? { databaseUrl } : {});
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    registryToken = await wharf.registryToken();
  });
  after(() => wharf?.close());

  it("refuses every bad name for an organization and a folder, naming the field and the rule", async () => {
    for (const name of BAD_NAMES) {
      for (const parent of ["", `/${org}`]) {
        const body = await expectError(
          await wharf.api(`/iam/v2/groups${parent}`, {
            method: "POST",
            token: wharf.adminToken,
            body: { name },
          }),
          { status: 400, code: 3, reason: "INVALID_ARGUMENT", field: "name" },
        );
        assert.match(body.message, /^Invalid argument: name: name must be 1 to 63 characters matching/, name);
        assert.ok(body.message.includes("[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"), `the rule, for ${name}`);
      }
      if (name !== "") assert.equal(await groupsNamed(name), 0, `nothing named ${JSON.stringify(name)}`);
    }
  });

  it("refuses a rename to a bad name and keeps the old one", async () => {
    const folder = await wharf.create(`/iam/v2/groups/${org}`, { name: "renamed-badly" });
    for (const name of BAD_NAMES.filter((n) => n !== "")) {
      for (const mask of ["", "?update_mask=name"]) {
        await expectError(
          await wharf.api(`/iam/v2/groups/${folder}${mask}`, {
            method: "PATCH",
            token: wharf.adminToken,
            body: { name },
          }),
          { status: 400, code: 3, field: "name" },
        );
      }
    }
    const kept = await expectJson<{ name: string }>(
      await wharf.api(`/iam/v2/groups/${folder}`, { token: wharf.adminToken }),
    );
    assert.equal(kept.name, "renamed-badly");
    const renamed = await expectJson<{ name: string }>(
      await wharf.api(`/iam/v2/groups/${folder}`, {
        method: "PATCH",
        token: wharf.adminToken,
        body: { name: "a---b" },
      }),
    );
    assert.equal(renamed.name, "a---b", "a good name is accepted on rename");
  });

  it("gRPC: a bad name is INVALID_ARGUMENT with ErrorInfo and a BadRequest violation on name", async () => {
    const client = createClient(GroupsService, createGrpcTransport({ baseUrl: wharf.apiUrl }));
    const headers = { authorization: `Bearer ${wharf.adminToken}` };
    const err = await client
      .createGroup({ parent: org, group: { name: "My Org" } }, { headers })
      .catch((e) => e);
    assert.ok(err instanceof ConnectError, String(err));
    assert.equal(err.code, Code.InvalidArgument);
    assert.equal(err.findDetails(ErrorInfoSchema)[0]?.reason, "INVALID_ARGUMENT");
    assert.deepEqual(
      err.findDetails(BadRequestSchema)[0]?.fieldViolations.map((v) => v.field),
      ["name"],
    );
    const created = await client.createGroup({ parent: org, group: { name: "a.b" } }, { headers });
    assert.equal(created.name, "a.b");
  });

  it("accepts every good name as an organization, and a push under each creates its repo", async () => {
    for (const name of GOOD_NAMES) {
      const uid = await wharf.create("/iam/v2/groups", { name });
      await pushImage(wharf, `${name}/app`, "latest", registryToken, `image of ${name}`);
      const repos = await expectJson<{ repos: { name: string; uid: string }[] }>(
        await wharf.api(`/registry/v2/repos?uidp.children_of=${uid}`, { token: wharf.adminToken }),
      );
      assert.deepEqual(
        repos.repos.map((r) => r.name),
        ["app"],
        `the push under ${name} created its repo`,
      );
    }
  });

  it("a push creating folders checks their names like the API: too long is NAME_INVALID, nothing created", async () => {
    const long = "f".repeat(64);
    const res = await uploadBlob(wharf, `acme/${long}/app`, "a blob", registryToken);
    assert.equal(res.status, 400);
    const error = await ociErrorOf(res);
    assert.equal(error.code, "NAME_INVALID");
    assert.match(error.message, /group name "f{64}" must be 1 to 63 characters/);
    assert.equal(await groupsNamed(long), 0, "no folder created");
    // 63 characters is the longest folder name, and a push creates it.
    await pushImage(wharf, `acme/${"f".repeat(63)}/app`, "v1", registryToken, "deep image");
    assert.equal(await groupsNamed("f".repeat(63)), 1);
  });

  it("repo names are checked by the same rule: 1 to 128 characters, on the API and on a push", async () => {
    for (const name of ["Has Spaces", "..", "a--", "r".repeat(129)]) {
      await expectError(
        await wharf.api(`/registry/v2/repos/${org}`, {
          method: "POST",
          token: wharf.adminToken,
          body: { name },
        }),
        { status: 400, code: 3, field: "name" },
      );
    }
    const longest = "r".repeat(128);
    await wharf.create(`/registry/v2/repos/${org}`, { name: longest });
    const res = await uploadBlob(wharf, `acme/${"p".repeat(129)}`, "a blob", registryToken);
    assert.equal(res.status, 400);
    assert.equal((await ociErrorOf(res)).code, "NAME_INVALID");
  });
});

describe("group names: a real client (skopeo) pushes to the shortest and the oddest names", () => {
  let wharf: TestServer;
  let work: string;
  let source: string;
  before(async () => {
    wharf = await startTestServer();
    work = await mkdtemp(join(tmpdir(), "wharf-names-"));
    source = join(work, "layout");
    await writeImageLayout(source, { tag: "v1", files: { "etc/name": "names\n" } });
  });
  after(async () => {
    await wharf?.close();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("pushes to a/…, ab/…, a.b/…, a__b/… and a---b/… with skopeo", { skip: skopeoSkip }, async () => {
    const host = new URL(wharf.registryUrl).host;
    const creds = `_token:${await wharf.registryToken()}`;
    for (const name of ["a", "ab", "a.b", "a__b", "a---b"]) {
      await wharf.create("/iam/v2/groups", { name });
      const dest = `docker://${host}/${name}/team/app:latest`;
      const push = await runSkopeo([
        "copy",
        "--dest-tls-verify=false",
        "--dest-creds",
        creds,
        `oci:${source}:v1`,
        dest,
      ]);
      assert.equal(push.code, 0, `push to ${name}: ${push.stderr}`);
      const inspect = await runSkopeo(["inspect", "--raw", "--tls-verify=false", "--creds", creds, dest]);
      assert.equal(inspect.code, 0, `inspect ${name}: ${inspect.stderr}`);
    }
  });
});
