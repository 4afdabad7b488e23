import assert from "node:assert/strict";
import http from "node:http";
import http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import {
  type ApiFixture,
  CALLER_UID,
  GOOD_TOKEN,
  OTHER_ORG,
  OWN_ORG,
  startApiFixture,
} from "../../support/api-test-fixture.js";

type Status = { code: number; message: string; details: Array<Record<string, unknown>> };
const AUTH = { authorization: `Bearer ${GOOD_TOKEN}` };
const TYPE = "type.googleapis.com/google.rpc.";

describe("REST transcoding over HTTP/1.1 and h2c", () => {
  let api: ApiFixture;
  let repoUid: string;

  const call = async (
    path: string,
    init: { method?: string; body?: string; headers?: Record<string, string> } = {},
  ) => {
    const res = await fetch(`${api.baseUrl}${path}`, {
      method: init.method ?? "GET",
      headers: {
        ...AUTH,
        ...(init.body !== undefined ? { "content-type": "application/json" } : {}),
        ...init.headers,
      },
      body: init.body,
    });
    const text = await res.text();
    return { res, status: res.status, json: JSON.parse(text) as Record<string, unknown> };
  };
  const expectError = async (
    path: string,
    init: Parameters<typeof call>[1],
    want: { status: number; code: number; field?: string; reason?: string },
  ): Promise<Status> => {
    const { status, json, res } = await call(path, init);
    assert.equal(status, want.status, JSON.stringify(json));
    assert.equal(res.headers.get("content-type"), "application/json");
    const body = json as unknown as Status;
    assert.equal(body.code, want.code);
    const info = body.details.find((d) => d["@type"] === `${TYPE}ErrorInfo`);
    assert.ok(info, "ErrorInfo always present");
    if (want.reason) assert.equal(info.reason, want.reason);
    if (want.field) {
      const bad = body.details.find((d) => d["@type"] === `${TYPE}BadRequest`) as
        | { fieldViolations: Array<{ field: string }> }
        | undefined;
      assert.equal(bad?.fieldViolations[0]?.field, want.field, JSON.stringify(body));
    }
    return body;
  };

  before(async () => {
    api = await startApiFixture();
    const created = await call(`/registry/v2/repos/${OWN_ORG}`, {
      method: "POST",
      body: JSON.stringify({ name: "app", description: "first" }),
    });
    assert.equal(created.status, 200, JSON.stringify(created.json));
    repoUid = created.json.uid as string;
  });
  after(() => api.close());

  it("serves an IAM-disabled RPC anonymously and echoes a sane request id", async () => {
    const res = await fetch(`${api.baseUrl}/ping/v2/ping`, { headers: { "x-request-id": "trace-42" } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.equal(res.headers.get("x-request-id"), "trace-42");
    assert.deepEqual(await res.json(), { response: "pong" });
    const generated = await fetch(`${api.baseUrl}/ping/v2/ping`, {
      headers: { "x-request-id": "bad id\u00e9" },
    });
    assert.match(generated.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/);
  });

  it("answers 401 with WWW-Authenticate for a missing or bad token", async () => {
    const missing = await fetch(`${api.baseUrl}/registry/v2/repos/${repoUid}`);
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get("www-authenticate"), "Bearer");
    const body = (await missing.json()) as Status;
    assert.equal(body.code, 16);
    assert.deepEqual(body.details[0], {
      "@type": `${TYPE}ErrorInfo`,
      reason: "UNAUTHENTICATED",
      domain: "registry.wharf.dev",
    });
    await expectError(
      `/registry/v2/repos/${repoUid}`,
      { headers: { authorization: "Bearer nope" } },
      { status: 401, code: 16 },
    );
    await expectError(
      `/registry/v2/repos/${repoUid}`,
      { headers: { authorization: "Basic eDp5" } },
      { status: 401, code: 16 },
    );
  });

  it("gets a resource by a ** path variable, with protojson field names", async () => {
    const { status, json } = await call(`/registry/v2/repos/${repoUid}`);
    assert.equal(status, 200);
    assert.deepEqual(json, {
      uid: repoUid,
      name: "app",
      description: "first",
      createTime: "2026-01-01T00:00:00Z",
      updateTime: "2026-01-01T00:00:00Z",
    });
  });

  it("prefers /{uid=**}/readme over /{uid=**} and decodes a body field", async () => {
    const put = await call(`/registry/v2/repos/${repoUid}/readme`, {
      method: "PATCH",
      body: JSON.stringify({ content: "# hello" }),
    });
    assert.equal(put.status, 200, JSON.stringify(put.json));
    assert.deepEqual(put.json, { uid: repoUid, content: "# hello" }, "path variable repo_readme.uid set");
    const got = await call(`/registry/v2/repos/${repoUid}/readme`);
    assert.deepEqual(got.json, { uid: repoUid, content: "# hello" });
  });

  it("derives update_mask from the body's keys unless the query gives one", async () => {
    const noMask = await call(`/registry/v2/repos/${repoUid}`, {
      method: "PATCH",
      body: JSON.stringify({ description: "second" }),
    });
    assert.equal(noMask.json.description, "second");
    const masked = await call(`/registry/v2/repos/${repoUid}?updateMask=name`, {
      method: "PATCH",
      body: JSON.stringify({ name: "app2", description: "ignored" }),
    });
    assert.equal(masked.json.name, "app2");
    assert.equal(masked.json.description, "second");
    await call(`/registry/v2/repos/${repoUid}?update_mask=name,createTime`, { method: "PATCH", body: "{}" });
    assert.deepEqual(api.updateMasks, [["description"], ["name"], ["name", "create_time"]]);
  });

  it("maps query parameters in snake_case and lowerCamelCase", async () => {
    for (const query of [
      `uidp.descendants_of=${OWN_ORG}&page_size=1`,
      `uidp.descendantsOf=${OWN_ORG}&pageSize=1`,
    ]) {
      const { status, json } = await call(`/registry/v2/repos?${query}`);
      assert.equal(status, 200, JSON.stringify(json));
      assert.equal((json.repos as unknown[]).length, 1);
      assert.equal(json.totalCount, "1", "int64 as a JSON string");
    }
  });

  it("turns bad input into INVALID_ARGUMENT naming the field", async () => {
    const post = (body: string) => ({ method: "POST", body });
    await expectError(`/registry/v2/repos/${OWN_ORG}`, post('{"name": "x"'), {
      status: 400,
      code: 3,
      field: "body",
    });
    await expectError(`/registry/v2/repos/${OWN_ORG}`, post('{"name": "x", "colour": 1}'), {
      status: 400,
      code: 3,
      field: "colour",
      reason: "INVALID_ARGUMENT",
    });
    await expectError(`/registry/v2/repos/${OWN_ORG}`, post('{"name": 42}'), {
      status: 400,
      code: 3,
      field: "name",
    });
    await expectError(`/registry/v2/repos/${OWN_ORG}`, post('{"createTime": "yesterday"}'), {
      status: 400,
      code: 3,
      field: "createTime",
    });
    await expectError(`/registry/v2/repos/${OWN_ORG}`, post("[1]"), { status: 400, code: 3, field: "body" });
    await expectError("/registry/v2/repos?page_size=ten", {}, { status: 400, code: 3, field: "page_size" });
    await expectError("/registry/v2/repos?colour=red", {}, { status: 400, code: 3, field: "colour" });
    await expectError(
      `/registry/v2/repos/${repoUid}?updateMask=x`,
      { method: "PATCH", body: '{"uid": 1}' },
      {
        status: 400,
        code: 3,
        field: "uid",
      },
    );
    await expectError("/registry/v2/repos/not-a-uid", {}, { status: 400, code: 3, field: "uid" });
    await expectError("/registry/v2/repos/%E0%A4%A", {}, { status: 400, code: 3, field: "uid" });
    const spec = await expectError(`/registry/v2/repos/${OWN_ORG}`, post("{}"), {
      status: 400,
      code: 3,
      field: "name",
    });
    assert.equal(spec.message, 'Invalid argument: name: name must match "^[a-z0-9 ._-]{1,}$"');
  });

  it("refuses a scope the caller holds nothing at with 403", async () => {
    await expectError(
      `/registry/v2/repos/${OTHER_ORG}/${"a".repeat(16)}`,
      {},
      { status: 403, code: 7, reason: "PERMISSION_DENIED" },
    );
  });

  it("answers NOT_FOUND with ResourceInfo, unknown paths 404 and wrong methods 405", async () => {
    const missing = await expectError(
      `/registry/v2/repos/${OWN_ORG}/${"0".repeat(16)}`,
      {},
      { status: 404, code: 5 },
    );
    assert.ok(missing.details.some((d) => d["@type"] === `${TYPE}ResourceInfo` && d.resourceType === "repo"));
    await expectError("/registry/v9/nothing", {}, { status: 404, code: 5 });
    const { res } = await call("/ping/v2/ping", { method: "POST", body: "{}" });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get("allow"), "GET");
    await expectError("/ping/v2/ping", { method: "DELETE" }, { status: 405, code: 12 });
  });

  it("limits request bodies", async () => {
    const big = JSON.stringify({ name: "x", description: "d".repeat(70 * 1024) });
    await expectError(
      `/registry/v2/repos/${OWN_ORG}`,
      { method: "POST", body: big },
      { status: 413, code: 8 },
    );
  });

  it("limits streamed bodies and survives a client that gives up mid-body", async () => {
    const port = api.server.address.port;
    const path = `/registry/v2/repos/${OWN_ORG}`;
    const chunked = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, path, method: "POST", headers: AUTH }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => {
          body += c.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      const chunk = "x".repeat(16 * 1024);
      for (let i = 0; i < 5; i++) req.write(chunk);
      req.end();
    });
    assert.equal(chunked.status, 413);
    assert.equal((JSON.parse(chunked.body) as Status).code, 8);

    const before = api.logLines.length;
    await new Promise<void>((resolve) => {
      const req = http.request({
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        headers: { ...AUTH, "content-length": "1000", "x-request-id": "gave-up" },
      });
      req.on("error", () => resolve());
      req.write('{"name": ');
      setTimeout(() => req.destroy(), 30);
    });
    await new Promise((r) => setTimeout(r, 50));
    const line = api.logLines.slice(before).find((l) => l.requestId === "gave-up");
    assert.equal(line?.code, "CANCELLED");
    assert.equal((await call("/ping/v2/ping")).status, 200, "server still serves");
  });

  it("hides unexpected failures behind a generic INTERNAL", async () => {
    const body = await expectError("/registry/v2/repos?name=boom", {}, { status: 500, code: 13 });
    assert.doesNotMatch(JSON.stringify(body), /10\.0\.0\.7/);
  });

  it("supports body '*', custom verbs and additional_bindings", async () => {
    const batch = await call("/iam/v2/roleBindings:batchCreate", {
      method: "POST",
      body: JSON.stringify({
        parent: OWN_ORG,
        roleUid: "r",
        requests: [{ roleBinding: { identityUid: "i" } }],
      }),
    });
    assert.equal(batch.status, 200, JSON.stringify(batch.json));
    assert.deepEqual(batch.json.roleBindings, [{ uid: `${OWN_ORG}/x`, identityUid: "i", roleUid: "r" }]);
    await expectError(
      "/iam/v2/roleBindings:batchCreate?parent=x",
      { method: "POST", body: "{}" },
      {
        status: 400,
        code: 3,
        field: "parent",
      },
    );
    const root = await call("/iam/v2/groups", { method: "POST", body: '{"name": "root"}' });
    assert.equal(root.json.uid, "|root");
    const child = await call(`/iam/v2/groups/${OWN_ORG}`, { method: "POST", body: '{"name": "child"}' });
    assert.equal(child.json.uid, `${OWN_ORG}|child`);
  });

  it("answers DELETE with {}", async () => {
    const created = await call(`/registry/v2/repos/${OWN_ORG}`, { method: "POST", body: '{"name": "gone"}' });
    const { status, json } = await call(`/registry/v2/repos/${created.json.uid}`, { method: "DELETE" });
    assert.equal(status, 200);
    assert.deepEqual(json, {});
  });

  it("serves extra routes outside the pipeline", async () => {
    const res = await fetch(`${api.baseUrl}/.well-known/openid-configuration`);
    assert.deepEqual(await res.json(), { issuer: "http://example" });
    assert.ok(res.headers.get("x-request-id"));
  });

  it("serves the same REST API over h2c", async () => {
    const session = http2.connect(api.baseUrl);
    try {
      const answer = await new Promise<{ status: number; requestId: string; body: string }>(
        (resolve, reject) => {
          const stream = session.request({
            ":path": `/registry/v2/repos/${repoUid}`,
            ...AUTH,
            "x-request-id": "h2-1",
          });
          let status = 0;
          let requestId = "";
          let body = "";
          stream.on("response", (h) => {
            status = Number(h[":status"]);
            requestId = String(h["x-request-id"]);
          });
          stream.on("data", (c: Buffer) => {
            body += c.toString();
          });
          stream.on("end", () => resolve({ status, requestId, body }));
          stream.on("error", reject);
          stream.end();
        },
      );
      assert.equal(answer.status, 200);
      assert.equal(answer.requestId, "h2-1");
      assert.equal((JSON.parse(answer.body) as { uid: string }).uid, repoUid);
    } finally {
      session.close();
    }
  });

  it("logs exactly one line per request, never the token", async () => {
    const before = api.logLines.length;
    await fetch(`${api.baseUrl}/registry/v2/repos/${repoUid}`, {
      headers: { ...AUTH, "x-request-id": "log-1" },
    });
    await fetch(`${api.baseUrl}/nowhere`, { headers: { "x-request-id": "log-2" } });
    await new Promise((r) => setTimeout(r, 20));
    const lines = api.logLines.slice(before);
    assert.deepEqual(
      lines.map((l) => l.requestId),
      ["log-1", "log-2"],
    );
    assert.deepEqual(
      {
        protocol: lines[0]?.protocol,
        method: lines[0]?.method,
        rpc: lines[0]?.rpc,
        status: lines[0]?.status,
        code: lines[0]?.code,
        identityUid: lines[0]?.identityUid,
      },
      {
        protocol: "rest",
        method: "GET",
        rpc: "platform.registry.v2.ReposService/GetRepo",
        status: 200,
        code: "OK",
        identityUid: CALLER_UID,
      },
    );
    assert.equal(lines[1]?.code, "NOT_FOUND");
    assert.doesNotMatch(JSON.stringify(api.logLines), new RegExp(GOOD_TOKEN.replaceAll(".", "\\.")));
    const internal = api.logLines.find((l) => l.code === "INTERNAL");
    assert.match(JSON.stringify(internal?.error), /database on fire/);
  });
});
