import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import * as up from "../../src/gen/platform/registry/v2/upstreams_pb.js";
import { detail, expectError, expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { personWithRole } from "../support/registered-person.js";
import { fakeSinkResolver } from "../support/sink-dns.js";
import {
  type ReceivedDelivery,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

type Json = Record<string, unknown>;
interface ApiUpstream {
  uid: string;
  name: string;
  url: string;
  username?: string;
  password?: string;
  tagTtl: string;
  hasPassword?: boolean;
  createTime: string;
  updateTime: string;
}

/** A password that must never come back: not in answers, events, audit records or logs. */
const PASSWORD = "pw-SENTINEL-4f9c1e";
const PASSWORD_2 = "pw-SENTINEL-second-77aa";

forEachEngine("upstreams: the Upstream resource over REST and gRPC", (db) => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let client: grpc.Client;
  let admin: string;
  let org: string;
  let folder: string;
  let orgB: string;
  let ownerB: string;
  let viewer: string;

  const api = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    wharf.api(path, { token: admin, ...init });
  const json = async <T = Json>(
    path: string,
    init: { method?: string; body?: unknown; token?: string } = {},
  ) => expectJson<T>(await api(path, init));
  const createUpstream = (parent: string, body: Json, token = admin) =>
    api(`/registry/v2/upstreams/${parent}`, { method: "POST", body, token });

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer({
      ...(databaseUrl ? { databaseUrl } : {}),
      // Loopback for the webhook receiver only; upstream URLs go through simulated DNS.
      config: { eventsAllowLoopback: "true" },
      resolveSinkHost: fakeSinkResolver({
        "registry.example": ["203.0.113.10"],
        "mirror.example": ["203.0.113.11"],
        "sneaky.example": ["203.0.113.12", "169.254.169.254"],
        "linklocal.example": ["169.254.10.10"],
        "localhost.example": ["127.0.0.1"],
      }),
    });
    admin = wharf.adminToken;
    client = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    receiver = await startWebhookReceiver();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    folder = await wharf.create(`/iam/v2/groups/${org}`, { name: "team" });
    await wharf.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url("/hook") });
    orgB = await wharf.create("/iam/v2/groups", { name: "globex" });
    ownerB = (await personWithRole(wharf, "bob", orgB, "owner")).token;
    viewer = (await personWithRole(wharf, "vic", org, "viewer")).token;
  });
  after(async () => {
    client?.close();
    await receiver?.close();
    await wharf?.close();
  });

  it("creates an upstream: normalised URL, default tagTtl 10m, hasPassword, and never the password", async () => {
    const res = await createUpstream(org, {
      name: "hub",
      url: "https://Registry.Example:443/",
      username: "robot",
      password: PASSWORD,
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    assert.ok(!text.includes(PASSWORD), "the answer has no password");
    const created = JSON.parse(text) as ApiUpstream;
    assert.match(created.uid, new RegExp(`^${org}/[0-9a-f]{16}$`));
    assert.equal(created.name, "hub");
    assert.equal(created.url, "https://registry.example");
    assert.equal(created.username, "robot");
    assert.equal(created.password, undefined);
    assert.equal(created.hasPassword, true);
    assert.equal(created.tagTtl, "10m");
    assert.equal(created.createTime, created.updateTime);

    const got = await json<ApiUpstream>(`/registry/v2/upstreams/${created.uid}`);
    assert.deepEqual(got, created);
    // Stored sealed: the row holds no clear text.
    const row = await wharf.store.upstreams.get(created.uid);
    assert.ok(row?.passwordSealed.startsWith("v1:"));
    assert.ok(!row?.passwordSealed.includes(PASSWORD));

    const anonymous = await json<ApiUpstream>(`/registry/v2/upstreams/${org}`, {
      method: "POST",
      body: { name: "quay", url: "https://mirror.example/prefix/sub/", tagTtl: "90s" },
    });
    assert.equal(anonymous.url, "https://mirror.example/prefix/sub");
    assert.equal(anonymous.tagTtl, "90s");
    assert.equal(anonymous.hasPassword, undefined, "false is omitted");
    assert.equal(anonymous.username, undefined);
  });

  it("lists an organization's upstreams with paging and totalCount, over REST and gRPC", async () => {
    const page = await json<{ upstreams: ApiUpstream[]; totalCount: string; nextPageToken?: string }>(
      `/registry/v2/upstreams?uidp.children_of=${org}&order_by=name&page_size=1`,
    );
    assert.equal(page.totalCount, "2");
    assert.deepEqual(
      page.upstreams.map((u) => u.name),
      ["hub"],
    );
    assert.ok(page.nextPageToken);
    const next = await json<{ upstreams: ApiUpstream[] }>(
      `/registry/v2/upstreams?uidp.children_of=${org}&order_by=name&page_size=1&page_token=${page.nextPageToken}`,
    );
    assert.deepEqual(
      next.upstreams.map((u) => u.name),
      ["quay"],
    );

    const listed = await grpcCall(
      client,
      "/platform.registry.v2.UpstreamsService/ListUpstreams",
      { input: up.ListUpstreamsRequestSchema, output: up.ListUpstreamsResponseSchema },
      create(up.ListUpstreamsRequestSchema, { uidp: { childrenOf: org }, orderBy: "name" }),
      viewer,
    );
    assert.equal(listed.error, undefined, listed.error?.details);
    assert.deepEqual(
      listed.response?.upstreams.map((u) => [u.name, u.password, u.hasPassword]),
      [
        ["hub", "", true],
        ["quay", "", false],
      ],
    );
  });

  it("creates, reads, updates and deletes over gRPC", async () => {
    const call = <
      I extends Parameters<typeof grpcCall>[2]["input"],
      O extends Parameters<typeof grpcCall>[2]["output"],
    >(
      method: string,
      schemas: { input: I; output: O },
      request: Parameters<typeof grpcCall<I, O>>[3],
    ) => grpcCall(client, `/platform.registry.v2.UpstreamsService/${method}`, schemas, request, admin);
    const made = await call(
      "CreateUpstream",
      { input: up.CreateUpstreamRequestSchema, output: up.UpstreamSchema },
      create(up.CreateUpstreamRequestSchema, {
        parent: org,
        upstream: {
          name: "ghcr",
          url: "https://registry.example/ghcr",
          username: "u",
          password: PASSWORD,
          tagTtl: "1h",
        },
      }),
    );
    assert.equal(made.error, undefined, made.error?.details);
    assert.equal(made.response?.password, "");
    assert.equal(made.response?.hasPassword, true);
    assert.equal(made.response?.tagTtl, "1h");
    const uid = made.response?.uid as string;

    const updated = await call(
      "UpdateUpstream",
      { input: up.UpdateUpstreamRequestSchema, output: up.UpstreamSchema },
      create(up.UpdateUpstreamRequestSchema, {
        upstream: { uid, tagTtl: "7d" },
        updateMask: { paths: ["tag_ttl"] },
      }),
    );
    assert.equal(updated.error, undefined, updated.error?.details);
    assert.equal(updated.response?.tagTtl, "7d");
    assert.equal(updated.response?.hasPassword, true, "the password stays when the mask leaves it out");

    const duplicate = await call(
      "CreateUpstream",
      { input: up.CreateUpstreamRequestSchema, output: up.UpstreamSchema },
      create(up.CreateUpstreamRequestSchema, {
        parent: org,
        upstream: { name: "ghcr", url: "https://registry.example" },
      }),
    );
    assert.equal(duplicate.error?.code, grpc.status.ALREADY_EXISTS);

    const deleted = await call(
      "DeleteUpstream",
      { input: up.DeleteUpstreamRequestSchema, output: up.DeleteUpstreamRequestSchema },
      create(up.DeleteUpstreamRequestSchema, { uid }),
    );
    assert.equal(deleted.error, undefined, deleted.error?.details);
    const gone = await call(
      "GetUpstream",
      { input: up.GetUpstreamRequestSchema, output: up.UpstreamSchema },
      create(up.GetUpstreamRequestSchema, { uid }),
    );
    assert.equal(gone.error?.code, grpc.status.NOT_FOUND);
  });

  it("updates by mask: url, username, password set and cleared; the name never changes", async () => {
    const made = await json<ApiUpstream>(`/registry/v2/upstreams/${org}`, {
      method: "POST",
      body: { name: "upd", url: "https://registry.example" },
    });
    const patch = (body: Json, mask?: string) =>
      api(`/registry/v2/upstreams/${made.uid}${mask === undefined ? "" : `?update_mask=${mask}`}`, {
        method: "PATCH",
        body,
      });
    const withCreds = await expectJson<ApiUpstream>(
      await patch({ url: "https://mirror.example/", username: "robot", password: PASSWORD_2 }),
    );
    assert.equal(withCreds.url, "https://mirror.example");
    assert.equal(withCreds.username, "robot");
    assert.equal(withCreds.hasPassword, true);
    assert.ok(withCreds.updateTime >= made.updateTime);
    assert.equal(withCreds.tagTtl, "10m", "unchanged outside the mask");

    await expectError(await patch({ username: "" }, "username"), { status: 400, code: 3, field: "password" });
    await expectError(await patch({ name: "other" }), { status: 400, code: 3, field: "name" });
    await expectError(await patch({ tagTtl: "8d" }), { status: 400, code: 3, field: "tag_ttl" });
    await expectError(await patch({ url: "https://sneaky.example" }), { status: 400, code: 3, field: "url" });

    const cleared = await expectJson<ApiUpstream>(await patch({}, "username,password"));
    assert.equal(cleared.username, undefined);
    assert.equal(cleared.hasPassword, undefined);
    assert.equal((await wharf.store.upstreams.get(made.uid))?.passwordSealed, "");
    await expectError(
      await api(`/registry/v2/upstreams/${org}/0000000000000000`, {
        method: "PATCH",
        body: { tagTtl: "5m" },
      }),
      { status: 404, code: 5 },
    );
  });

  it("refuses bad input with a structured error naming the field", async () => {
    const bad = async (body: Json, field: string, pattern: RegExp, parent = org) => {
      const error = await expectError(await createUpstream(parent, body), { status: 400, code: 3, field });
      assert.match(error.message, pattern);
      assert.ok(!JSON.stringify(error).includes(PASSWORD), "no error repeats the password");
    };
    const url = "https://registry.example";
    await bad({ name: "Bad_Name!", url }, "name", /name must be 1 to 63 characters/);
    await bad({ name: "a/b", url }, "name", /registry path component/);
    await bad({ name: "", url }, "name", /name must be/);
    await bad({ name: "x" }, "url", /url is required/);
    await bad({ name: "x", url: "ftp://registry.example" }, "url", /https URL/);
    await bad({ name: "x", url: "registry.example" }, "url", /absolute https URL/);
    await bad({ name: "x", url: "http://registry.example" }, "url", /--events-allow-http/);
    await bad(
      { name: "x", url: `https://robot:${PASSWORD}@registry.example` },
      "url",
      /must not carry credentials/,
    );
    await bad({ name: "x", url: "https://registry.example/?a=b" }, "url", /query/);
    await bad({ name: "x", url: "https://registry.example/#top" }, "url", /fragment/);
    await bad({ name: "x", url: "https://registry.example/Bad Prefix" }, "url", /repository path prefix/);
    await bad(
      { name: "x", url: "https://169.254.169.254" },
      "url",
      /cloud metadata address.*--events-sink-allow/,
    );
    await bad({ name: "x", url: "https://[fd00:ec2::254]" }, "url", /cloud metadata address/);
    await bad(
      { name: "x", url: "https://sneaky.example" },
      "url",
      /sneaky\.example resolves to 169\.254\.169\.254, a cloud metadata address/,
    );
    await bad(
      { name: "x", url: "https://linklocal.example" },
      "url",
      /link-local address.*--events-sink-allow/,
    );
    await bad({ name: "x", url: "https://nowhere.example" }, "url", /does not resolve \(ENOTFOUND\)/);
    await bad({ name: "x", url, tagTtl: "0s" }, "tag_ttl", /duration like/);
    await bad({ name: "x", url, tagTtl: "8d" }, "tag_ttl", /between 1s and 7d/);
    await bad({ name: "x", url, tagTtl: "soon" }, "tag_ttl", /duration like/);
    await bad({ name: "x", url, username: "a:b" }, "username", /without spaces or ":"/);
    await bad({ name: "x", url, password: PASSWORD }, "password", /needs a username/);
    await bad({ name: "x", url }, "parent", /must be an organization.*"team" is a folder/, folder);
    await expectError(await createUpstream(`${org}/0000000000000000`, { name: "x", url }), {
      status: 404,
      code: 5,
    });
    await expectError(await createUpstream(org, { name: "hub", url }), { status: 409, code: 6 });
    assert.equal(
      (
        await wharf.store.upstreams.list(
          { uidp: { childrenOf: org } },
          { order: { field: "uid", desc: false }, limit: 100, skip: 0 },
        )
      ).rows.some((r) => r.name === "x"),
      false,
      "nothing was created",
    );
  });

  it("keeps other organizations out: B's owner neither sees nor changes A's upstreams; A's viewer only reads", async () => {
    const hub = (await wharf.store.upstreams.getByName(org, "hub"))?.uid as string;
    const listed = await json<{ upstreams?: ApiUpstream[] }>("/registry/v2/upstreams", { token: ownerB });
    assert.deepEqual(listed.upstreams ?? [], []);
    await expectError(await api(`/registry/v2/upstreams/${hub}`, { token: ownerB }), {
      status: 403,
      code: 7,
    });
    await expectError(
      await api(`/registry/v2/upstreams/${hub}`, { method: "PATCH", body: { tagTtl: "1m" }, token: ownerB }),
      { status: 403, code: 7 },
    );
    await expectError(await api(`/registry/v2/upstreams/${hub}`, { method: "DELETE", token: ownerB }), {
      status: 403,
      code: 7,
    });
    await expectError(
      await createUpstream(org, { name: "intruder", url: "https://registry.example" }, ownerB),
      {
        status: 403,
        code: 7,
      },
    );
    // B's owner creates in B: fine, and A's viewer does not see it.
    await expectJson(await createUpstream(orgB, { name: "hub", url: "https://registry.example" }, ownerB));
    const seenByViewer = await json<{ upstreams: ApiUpstream[] }>("/registry/v2/upstreams", {
      token: viewer,
    });
    assert.ok(seenByViewer.upstreams.every((u) => u.uid.startsWith(`${org}/`)));
    assert.ok(seenByViewer.upstreams.some((u) => u.uid === hub));
    await expectError(
      await createUpstream(org, { name: "by-viewer", url: "https://registry.example" }, viewer),
      {
        status: 403,
        code: 7,
      },
    );
  });

  it("refuses CreateRepo in an upstream's namespace (UPSTREAM_NAMESPACE), not beside it", async () => {
    const hubFolder = await wharf.create(`/iam/v2/groups/${org}`, { name: "hub" });
    const refused = await expectError(
      await api(`/registry/v2/repos/${hubFolder}`, { method: "POST", body: { name: "alpine" } }),
      { status: 400, code: 9, reason: "FAILED_PRECONDITION" },
    );
    const violations = (detail(refused, "PreconditionFailure")?.violations ?? []) as { type: string }[];
    assert.deepEqual(
      violations.map((v) => v.type),
      ["UPSTREAM_NAMESPACE"],
    );
    assert.match(refused.message, /pull-through cache namespace of upstream hub/);
    const deeper = await wharf.create(`/iam/v2/groups/${hubFolder}`, { name: "library" });
    await expectError(await api(`/registry/v2/repos/${deeper}`, { method: "POST", body: { name: "x" } }), {
      status: 400,
      code: 9,
    });
    // Beside the namespace: the organization itself and other folders are not the cache's.
    await expectJson(await api(`/registry/v2/repos/${org}`, { method: "POST", body: { name: "hubby" } }));
    await expectJson(await api(`/registry/v2/repos/${folder}`, { method: "POST", body: { name: "alpine" } }));
  });

  it("records upstream.created/updated/deleted events and audit records, and never the password in them or in logs", async () => {
    const made = await json<ApiUpstream>(`/registry/v2/upstreams/${org}`, {
      method: "POST",
      body: { name: "evented", url: "https://registry.example", username: "robot", password: PASSWORD },
    });
    await json(`/registry/v2/upstreams/${made.uid}`, { method: "PATCH", body: { password: PASSWORD_2 } });
    await json(`/registry/v2/upstreams/${made.uid}`, { method: "DELETE" });
    const about = (all: ReceivedDelivery[]) => all.filter((d) => d.headers["ce-subject"] === made.uid);
    const delivered = await receiver.waitFor((all) => about(all).length === 3);
    assert.deepEqual(
      about(delivered).map((d) => String(d.headers["ce-type"])),
      [
        "dev.wharf.api.registry.upstream.created.v1",
        "dev.wharf.api.registry.upstream.updated.v1",
        "dev.wharf.api.registry.upstream.deleted.v1",
      ],
    );
    const createdBody = (
      JSON.parse(about(delivered)[0]?.body ?? "{}") as { body?: { hasPassword?: boolean; name?: string } }
    ).body;
    assert.equal(createdBody?.name, "evented");
    assert.equal(createdBody?.hasPassword, true);
    for (const d of receiver.received) {
      assert.ok(!d.body.includes(PASSWORD) && !d.body.includes(PASSWORD_2), "no event carries a password");
    }

    const audit = await api(`/audit/v2/records?page_size=1000`);
    const auditText = await audit.text();
    assert.equal(audit.status, 200, auditText);
    const actions = (JSON.parse(auditText) as { records: { action: string; resource: string }[] }).records
      .filter((r) => r.resource === made.uid)
      .map((r) => r.action)
      .sort();
    assert.deepEqual(actions, [
      "platform.registry.v2.UpstreamsService/CreateUpstream",
      "platform.registry.v2.UpstreamsService/DeleteUpstream",
      "platform.registry.v2.UpstreamsService/UpdateUpstream",
    ]);
    assert.ok(
      !auditText.includes(PASSWORD) && !auditText.includes(PASSWORD_2),
      "no audit record carries a password",
    );
    const logs = JSON.stringify(wharf.logLines);
    assert.ok(!logs.includes(PASSWORD) && !logs.includes(PASSWORD_2), "no log line carries a password");
  });
});
