import assert from "node:assert/strict";
import { rm } from "node:fs/promises";
import { after, before, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import {
  PreviewRetentionPolicyRequestSchema,
  PreviewRetentionPolicyResponseSchema,
} from "../../src/gen/platform/registry/v2/retention_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { cliChecks, cliHome } from "../support/cli-checks.js";
import { runCliInProcess } from "../support/cli-in-process.js";
import { onOneEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { personWithRole } from "../support/registered-person.js";
import { pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

// Retention policies' API surface on one engine (the storage side runs on both in retention.test.ts):
// validation naming the field, update masks and schedules, one run at a time, cross-organization
// refusals, gRPC, and the `wharf images retention` verbs end to end.

onOneEngine("retention policies: validation, schedules, access, gRPC and the CLI", () => {
  let server: TestServer;
  let home: string;
  let env: NodeJS.ProcessEnv;
  let org: string;
  let repo: string;
  let client: grpc.Client;
  const { ok, json, fails } = cliChecks(runCliInProcess, () => env);

  before(async () => {
    server = await startTestServer();
    ({ home, env } = await cliHome("wharf-retention-cli-", server, server.adminToken));
    org = await server.create("/iam/v2/groups", { name: "acme" });
    const token = await server.registryToken();
    await pushImage(server, "acme/app", "old", token, "an old image");
    await pushImage(server, "acme/app", "new", token, "a new image");
    repo = (
      await expectJson<{ repos: { uid: string }[] }>(
        await server.api(`/registry/v2/repos?uidp.children_of=${org}&name=app`, { token: server.adminToken }),
      )
    ).repos[0]?.uid as string;
    client = new grpc.Client(new URL(server.apiUrl).host, grpc.credentials.createInsecure());
  });
  after(async () => {
    client?.close();
    await server?.close();
    if (home) await rm(home, { recursive: true, force: true });
  });

  const post = (path: string, body: unknown, token = server.adminToken) =>
    server.api(path, { method: "POST", token, body });

  it("refuses bad rules and schedules with INVALID_ARGUMENT naming the field", async () => {
    const bad: [unknown, string][] = [
      [{ rules: [] }, "rules"],
      [{ rules: [{ keepPushedWithin: "30 days" }] }, "rules[0].keepPushedWithin"],
      [{ rules: [{ keepLatest: 1 }, { keepPulledWithin: "-1h" }] }, "rules[1].keepPulledWithin"],
      [{ rules: [{ keepLatest: -1 }] }, "rules[0].keepLatest"],
      [{ rules: [{ tagPattern: "v[1", keepLatest: 1 }] }, "rules[0].tagPattern"],
      [{ rules: [{ tagPattern: "a/b", keepLatest: 1 }] }, "rules[0].tagPattern"],
      [{ rules: [{ repoPattern: "!x", keepLatest: 1 }] }, "rules[0].repoPattern"],
      [{ rules: [{ tagPattern: "v*" }] }, "rules[0]"],
      [{ rules: [{ keepLatest: 1 }], schedule: "30s" }, "schedule"],
      [{ rules: [{ keepLatest: 1 }], schedule: "daily" }, "schedule"],
    ];
    for (const [body, field] of bad) {
      await expectError(await post(`/registry/v2/retentionPolicies/${org}`, body), {
        status: 400,
        code: 3,
        reason: "INVALID_ARGUMENT",
        field,
      });
    }
    // A repo's policy has no repo path below it.
    await expectError(
      await post(`/registry/v2/retentionPolicies/${repo}`, { rules: [{ repoPattern: "*", keepLatest: 1 }] }),
      { status: 400, code: 3, field: "rules[0].repoPattern" },
    );
    await expectError(
      await post(`/registry/v2/retentionPolicies/${org}/0123456789abcdef`, { rules: [{ keepLatest: 1 }] }),
      { status: 404, code: 5 },
    );
  });

  it("updates by mask; a schedule sets the next run time, an empty one clears it", async () => {
    const uid = await server.create(`/registry/v2/retentionPolicies/${repo}`, { rules: [{ keepLatest: 1 }] });
    const got = await expectJson<{ schedule?: string; nextRunTime?: string }>(
      await server.api(`/registry/v2/retentionPolicies/${uid}`, { token: server.adminToken }),
    );
    assert.equal(got.schedule, undefined, "manual: the empty schedule (left out)");
    assert.equal(got.nextRunTime, undefined);
    const before = Date.now();
    const scheduled = await expectJson<{ schedule: string; nextRunTime: string; rules: unknown[] }>(
      await server.api(`/registry/v2/retentionPolicies/${uid}?update_mask=schedule`, {
        method: "PATCH",
        token: server.adminToken,
        body: { schedule: "24h", rules: [{ keepLatest: 9 }] },
      }),
    );
    assert.equal(scheduled.schedule, "24h");
    assert.deepEqual(scheduled.rules, [{ keepLatest: 1 }], "rules are outside the mask");
    const next = Date.parse(scheduled.nextRunTime);
    assert.ok(next >= before + 24 * 3_600_000 && next <= Date.now() + 24 * 3_600_000);
    const manual = await expectJson<{ schedule: string; nextRunTime?: string }>(
      await server.api(`/registry/v2/retentionPolicies/${uid}?update_mask=schedule`, {
        method: "PATCH",
        token: server.adminToken,
        body: { schedule: "" },
      }),
    );
    assert.equal(manual.nextRunTime, undefined);
    await expectError(
      await server.api(`/registry/v2/retentionPolicies/${uid}?update_mask=rules`, {
        method: "PATCH",
        token: server.adminToken,
        body: { rules: [{ keepPushedWithin: "1y" }] },
      }),
      { status: 400, code: 3, field: "rules[0].keepPushedWithin" },
    );
  });

  it("runs one at a time: a run while another holds the policy is FAILED_PRECONDITION", async () => {
    const uid = await server.create(`/registry/v2/retentionPolicies/${repo}`, { rules: [{ keepLatest: 5 }] });
    const now = Date.now();
    assert.ok(
      await server.store.retention.claimRun(uid, { now, leaseUntil: now + 60_000, scheduled: false }),
    );
    const body = await expectError(await post(`/registry/v2/retentionPolicies/${uid}:run`, {}), {
      status: 400,
      code: 9,
      reason: "FAILED_PRECONDITION",
    });
    assert.match(JSON.stringify(body), /RETENTION_RUN_IN_PROGRESS/);
    await server.store.retention.releaseRun(uid);
    const run = await expectJson<{ uid: string; deletedTags?: string }>(
      await post(`/registry/v2/retentionPolicies/${uid}:run`, {}),
    );
    assert.equal(run.deletedTags, undefined, "none removed (an int64 zero is left out)");
    assert.ok(run.uid.startsWith(`${uid}/`));
  });

  it("another organization's owner can neither see nor preview, run or change a policy", async () => {
    const uid = await server.create(`/registry/v2/retentionPolicies/${org}`, { rules: [{ keepLatest: 1 }] });
    const globex = await server.create("/iam/v2/groups", { name: "globex" });
    const other = await personWithRole(server, "mallory", globex, "owner");
    for (const [path, method, body] of [
      [`/registry/v2/retentionPolicies/${uid}`, "GET", undefined],
      [`/registry/v2/retentionPolicies/${uid}:preview`, "POST", {}],
      [`/registry/v2/retentionPolicies/${uid}:run`, "POST", {}],
      [`/registry/v2/retentionPolicies/${uid}`, "PATCH", { description: "mine" }],
      [`/registry/v2/retentionPolicies/${uid}`, "DELETE", undefined],
      [`/registry/v2/retentionPolicies/${org}`, "POST", { rules: [{ keepLatest: 1 }] }],
    ] as const) {
      await expectError(await server.api(path, { method, token: other.token, ...(body ? { body } : {}) }), {
        status: 403,
        code: 7,
      });
    }
    const listed = await expectJson<{ retentionPolicies?: { uid: string }[] }>(
      await server.api("/registry/v2/retentionPolicies", { token: other.token }),
    );
    assert.deepEqual(listed.retentionPolicies ?? [], []);
    const viewer = await personWithRole(server, "victor", org, "viewer");
    await expectJson(await post(`/registry/v2/retentionPolicies/${uid}:preview`, {}, viewer.token));
    await expectError(await post(`/registry/v2/retentionPolicies/${uid}:run`, {}, viewer.token), {
      status: 403,
      code: 7,
    });
    await expectJson(
      await server.api(`/registry/v2/retentionPolicies/${uid}`, {
        method: "DELETE",
        token: server.adminToken,
      }),
    );
  });

  it("answers over gRPC as over REST", async () => {
    const uid = await server.create(`/registry/v2/retentionPolicies/${repo}`, { rules: [{ keepLatest: 1 }] });
    const { response, error } = await grpcCall(
      client,
      "/platform.registry.v2.RetentionPoliciesService/PreviewRetentionPolicy",
      { input: PreviewRetentionPolicyRequestSchema, output: PreviewRetentionPolicyResponseSchema },
      create(PreviewRetentionPolicyRequestSchema, { uid }),
      server.adminToken,
    );
    assert.equal(error, undefined);
    assert.deepEqual(
      response?.tags.map((t) => `${t.repo}:${t.name}`),
      ["acme/app:old"],
    );
  });

  it("wharf images retention: create, list, describe, preview (a table), run, update, delete", async () => {
    const created = await json<{ uid: string; rules: unknown[] }>([
      "images",
      "retention",
      "create",
      "acme/app",
      "--rule",
      "tags=*,latest=1",
      "--description",
      "cli",
    ]);
    assert.deepEqual(created.rules, [{ tagPattern: "*", keepLatest: 1 }]);
    const listed = await json<{ uid: string }[]>(["images", "retention", "list", "--parent", "acme"]);
    assert.ok(listed.some((p) => p.uid === created.uid));
    assert.match(
      await ok(["images", "retention", "describe", created.uid, "-o", "table"]),
      /tags=\*,latest=1/,
    );
    const table = await ok(["images", "retention", "preview", created.uid, "-o", "table"]);
    assert.match(table, /│ REPO\s+│ TAG\s+│ DIGEST\s+│ REASON/);
    assert.match(table, /│ acme\/app │ old │ sha256:[0-9a-f]{64} │ the 1 rule matching it/);
    assert.doesNotMatch(table, /\snew\s/);
    const removed = await json<{ name: string }[]>(["images", "retention", "run", created.uid]);
    assert.deepEqual(
      removed.map((t) => t.name),
      ["old"],
    );
    assert.deepEqual(await json<unknown[]>(["images", "retention", "preview", created.uid]), []);
    const updated = await json<{ schedule: string }>([
      "images",
      "retention",
      "update",
      created.uid,
      "--schedule",
      "12h",
    ]);
    assert.equal(updated.schedule, "12h");
    await fails(
      ["images", "retention", "create", "acme/app", "--rule", "keep=3"],
      2,
      /expected key=value pairs/,
    );
    await fails(["images", "retention", "create", "acme/app"], 2, /at least one --rule/);
    await ok(["images", "retention", "delete", created.uid]);
    await fails(["images", "retention", "describe", created.uid], 4, /not found/i);
  });
});
