import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { newChildUid } from "../../src/core/uidp.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

describe("bad input gets INVALID_ARGUMENT naming the field, and writes nothing", () => {
  let wharf: TestServer;
  let org: string;
  const repoCount = async () =>
    (
      await expectJson<{ totalCount: string }>(
        await wharf.api(`/registry/v2/repos?uidp.descendants_of=${org}`, { token: wharf.adminToken }),
      )
    ).totalCount;

  before(async () => {
    wharf = await startTestServer();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    // 205 repos, written straight to the store, to see page_size clamping.
    await wharf.store.transaction(async (tx) => {
      for (let i = 0; i < 205; i++) {
        await tx.repos.insert({
          uid: newChildUid(org),
          groupUid: org,
          name: `repo-${String(i).padStart(3, "0")}`,
          description: "",
          readme: "",
          createTime: 1_700_000_000_000 + i,
          updateTime: 1_700_000_000_000 + i,
        });
      }
    });
  });
  after(() => wharf.close());

  const post = (path: string, rawBody: string) =>
    wharf.api(path, { method: "POST", token: wharf.adminToken, rawBody });

  it("malformed JSON", async () => {
    await expectError(await post(`/registry/v2/repos/${org}`, '{"name": "x"'), {
      status: 400,
      code: 3,
      field: "body",
    });
    assert.equal(await repoCount(), "205");
  });

  it("unknown JSON field", async () => {
    await expectError(await post(`/registry/v2/repos/${org}`, '{"name": "x", "colour": "red"}'), {
      status: 400,
      code: 3,
      field: "colour",
    });
    assert.equal(await repoCount(), "205");
  });

  it("wrong JSON type", async () => {
    await expectError(await post(`/registry/v2/repos/${org}`, '{"name": 42}'), {
      status: 400,
      code: 3,
      field: "name",
    });
  });

  it("bad uid syntax in the path and in filters", async () => {
    await expectError(await wharf.api("/registry/v2/repos/not-a-uid", { token: wharf.adminToken }), {
      status: 400,
      code: 3,
      field: "uid",
    });
    await expectError(await post("/registry/v2/repos/ABC", '{"name": "x"}'), {
      status: 400,
      code: 3,
      field: "parent",
    });
    await expectError(
      await wharf.api("/registry/v2/repos?uidp.descendants_of=xyz", { token: wharf.adminToken }),
      {
        status: 400,
        code: 3,
        field: "uidp.descendants_of",
      },
    );
  });

  it("page_size that is not a number, or negative", async () => {
    await expectError(await wharf.api("/registry/v2/repos?page_size=ten", { token: wharf.adminToken }), {
      status: 400,
      code: 3,
      field: "page_size",
    });
    await expectError(await wharf.api("/registry/v2/repos?page_size=-1", { token: wharf.adminToken }), {
      status: 400,
      code: 3,
      field: "page_size",
    });
  });

  it("clamps page_size above 200", async () => {
    const page = await expectJson<{ repos: unknown[]; nextPageToken: string }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${org}&page_size=1000`, {
        token: wharf.adminToken,
      }),
    );
    assert.equal(page.repos.length, 200);
    assert.ok(page.nextPageToken);
  });

  it("unknown order_by field", async () => {
    await expectError(
      await wharf.api("/registry/v2/repos?order_by=colour%20desc", { token: wharf.adminToken }),
      {
        status: 400,
        code: 3,
        field: "order_by",
      },
    );
    await expectError(
      await wharf.api("/registry/v2/repos?order_by=name%20sideways", { token: wharf.adminToken }),
      {
        status: 400,
        code: 3,
        field: "order_by",
      },
    );
  });

  it("page_token from another query, or tampered", async () => {
    const first = await expectJson<{ nextPageToken: string }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${org}&page_size=2&order_by=name`, {
        token: wharf.adminToken,
      }),
    );
    assert.ok(first.nextPageToken);
    await expectError(
      await wharf.api(
        `/registry/v2/repos?uidp.descendants_of=${org}&page_size=2&order_by=name%20desc&page_token=${first.nextPageToken}`,
        {
          token: wharf.adminToken,
        },
      ),
      { status: 400, code: 3, field: "page_token" },
    );
    const tampered = `x${first.nextPageToken.slice(1)}`;
    await expectError(
      await wharf.api(
        `/registry/v2/repos?uidp.descendants_of=${org}&page_size=2&order_by=name&page_token=${tampered}`,
        {
          token: wharf.adminToken,
        },
      ),
      { status: 400, code: 3, field: "page_token" },
    );
  });

  it("unknown query parameter", async () => {
    await expectError(await wharf.api("/registry/v2/repos?colour=red", { token: wharf.adminToken }), {
      status: 400,
      code: 3,
      field: "colour",
    });
  });

  it("invalid names never reach the store", async () => {
    await expectError(await post(`/registry/v2/repos/${org}`, '{"name": "Has Spaces"}'), {
      status: 400,
      code: 3,
      field: "name",
    });
    await expectError(await post("/iam/v2/groups", '{"name": "UPPER"}'), {
      status: 400,
      code: 3,
      field: "name",
    });
    assert.equal(await repoCount(), "205");
  });
});
