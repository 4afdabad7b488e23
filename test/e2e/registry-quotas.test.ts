import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { systemClock } from "../../src/core/clock.js";
import { GetUsageRequestSchema, UsageSchema } from "../../src/gen/platform/registry/v2/quotas_pb.js";
import { collectGarbage } from "../../src/registry/data-plane/garbage-collector.js";
import { createMemoryBlobDriver } from "../../src/storage/blobs/memory/memory-blob-driver.js";
import { detail, expectError, expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { writeImageLayout } from "../support/oci-layout.js";
import { personWithRole, type RegisteredPerson } from "../support/registered-person.js";
import {
  type BuiltImage,
  buildImage,
  ociErrorOf,
  pushBlob,
  pushImage,
  putManifest,
  sha256,
} from "../support/registry-push.js";
import { runSkopeo, skopeoSkip } from "../support/skopeo.js";
import {
  type ReceivedDelivery,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const WARNING = "dev.wharf.api.registry.quota.warning.v1";
const EXCEEDED = "dev.wharf.api.registry.quota.exceeded.v1";
const UPDATED = "dev.wharf.api.registry.quota.updated.v1";
const PUSH = "dev.wharf.registry.push.v1";

interface UsageJson {
  storageBytes: string;
  repoCount: string;
  tagCount: string;
  quota: { storageBytes: string; repoCount: string };
}

/** The bytes an image adds when none of it is stored yet: its manifest and every blob. */
function bytesOf(image: BuiltImage): number {
  let total = image.manifest.byteLength;
  for (const blob of image.blobs.values()) total += blob.byteLength;
  return total;
}

function ofType(deliveries: ReceivedDelivery[], type: string): Record<string, unknown>[] {
  return deliveries
    .filter((d) => d.headers["ce-type"] === type)
    .map((d) => JSON.parse(d.body) as { body: Record<string, unknown> })
    .map((e) => e.body);
}

// Quotas and usage (extensions.md "Quotas and usage", ADR 0047) against a real server, on both engines.
forEachEngine("registry quotas and usage", (db) => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let acme: string;
  let owner: RegisteredPerson;
  let token: string;

  const usage = async (group: string, as = owner.token) =>
    expectJson<UsageJson>(await wharf.api(`/registry/v2/usage/${group}`, { token: as }));
  const setQuota = (body: Record<string, string>, as = wharf.adminToken, group = acme) =>
    wharf.api(`/registry/v2/quotas/${group}`, { method: "PATCH", token: as, body });

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer({
      ...(databaseUrl ? { databaseUrl } : {}),
      config: { eventsAllowLoopback: "true" },
      events: { backoffBaseMs: 40, backoffMaxMs: 200, pollMs: 50 },
    });
    receiver = await startWebhookReceiver();
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    await wharf.create(`/events/v2/subscriptions/${acme}`, { sink: receiver.url() });
    owner = await personWithRole(wharf, "alice", acme, "owner");
    token = await wharf.registryToken();
  });
  after(async () => {
    await wharf?.close();
    await receiver?.close();
  });

  it("counts layers shared by two repos once; a folder answers its own usage; gRPC answers the same", async () => {
    const one = await pushImage(
      wharf,
      "acme/one",
      "v1",
      token,
      buildImage("one", ["shared layer", "only one"]),
    );
    const two = await pushImage(
      wharf,
      "acme/two",
      "v1",
      token,
      buildImage("two", ["shared layer", "only two"]),
    );
    await pushImage(wharf, "acme/two", "copy", token, one);
    const shared = Buffer.byteLength("shared layer");
    const expected = bytesOf(one) + bytesOf(two) - shared;
    assert.deepEqual(await usage(acme), {
      storageBytes: String(expected),
      repoCount: "2",
      tagCount: "3",
      quota: { storageBytes: "0", repoCount: "0" },
    });

    const team = await pushImage(
      wharf,
      "acme/team/three",
      "v1",
      token,
      buildImage("three", ["shared layer"]),
    );
    const folder = await expectJson<{ groups: { uid: string; name: string }[] }>(
      await wharf.api(`/iam/v2/groups?uidp.children_of=${acme}`, { token: wharf.adminToken }),
    );
    const teamUid = folder.groups.find((g) => g.name === "team")?.uid as string;
    assert.deepEqual(await usage(teamUid), {
      storageBytes: String(bytesOf(team)),
      repoCount: "1",
      tagCount: "1",
      quota: { storageBytes: "0", repoCount: "0" },
    });
    assert.equal(
      (await usage(acme)).storageBytes,
      String(expected + bytesOf(team) - shared),
      "shared again: once",
    );

    const client = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    try {
      const answer = await grpcCall(
        client,
        "/platform.registry.v2.QuotasService/GetUsage",
        { input: GetUsageRequestSchema, output: UsageSchema },
        create(GetUsageRequestSchema, { groupUid: acme }),
        owner.token,
      );
      assert.equal(answer.error, undefined, answer.error?.details);
      assert.equal(answer.response?.storageBytes, BigInt((await usage(acme)).storageBytes));
    } finally {
      client.close();
    }
  });

  it("only the platform administrator sets quotas; a folder or a bad value is INVALID_ARGUMENT", async () => {
    await expectError(await setQuota({ storageBytes: "1" }, owner.token), {
      status: 403,
      code: 7,
      reason: "PERMISSION_DENIED",
    });
    const other = await wharf.create("/iam/v2/groups", { name: "other-org" });
    const outsider = await personWithRole(wharf, "bob", other, "owner");
    await expectError(await wharf.api(`/registry/v2/usage/${acme}`, { token: outsider.token }), {
      status: 403,
      code: 7,
    });
    const folder = await wharf.create(`/iam/v2/groups/${acme}`, { name: "folder" });
    await expectError(await setQuota({ storageBytes: "1" }, wharf.adminToken, folder), {
      status: 400,
      code: 3,
      field: "group_uid",
    });
    await expectError(await setQuota({ repoCount: "-1" }), { status: 400, code: 3, field: "repo_count" });

    assert.deepEqual(await expectJson(await setQuota({ storageBytes: "1000000" })), {
      storageBytes: "1000000",
      repoCount: "0",
    });
    assert.deepEqual(
      await expectJson(await setQuota({ repoCount: "50" })),
      {
        storageBytes: "1000000",
        repoCount: "50",
      },
      "a field left out keeps its value",
    );
    assert.deepEqual((await usage(acme)).quota, { storageBytes: "1000000", repoCount: "50" });
    const updates = ofType(await receiver.waitFor((a) => ofType(a, UPDATED).length >= 2), UPDATED);
    assert.deepEqual(updates.at(-1), { storageBytes: "1000000", repoCount: "50" });
    assert.deepEqual(await expectJson(await setQuota({ storageBytes: "0", repoCount: "0" })), {
      storageBytes: "0",
      repoCount: "0",
    });
  });

  it("refuses blob upload completion past the quota, keeping nothing of the blob", async () => {
    const before = Number((await usage(acme)).storageBytes);
    await expectJson(await setQuota({ storageBytes: String(before + 100) }));
    const big = Buffer.alloc(101, 1);
    // Monolithic: POST with the digest and the bytes.
    const mono = await wharf.registry(`/v2/acme/one/blobs/uploads/?digest=${sha256(big)}`, {
      method: "POST",
      token,
      headers: { "content-type": "application/octet-stream" },
      body: big,
    });
    assert.equal(mono.status, 403);
    assert.deepEqual(await ociErrorOf(mono), {
      code: "DENIED",
      message: `quota exceeded: acme uses ${before} of ${before + 100} bytes`,
    });
    // Chunked: the final PUT is the completion.
    const big2 = Buffer.alloc(150, 2);
    const started = await wharf.registry("/v2/acme/one/blobs/uploads/", { method: "POST", token });
    assert.equal(started.status, 202);
    const location = started.headers.get("location") as string;
    const patched = await wharf.registry(location, { method: "PATCH", token, body: big2 });
    assert.equal(patched.status, 202);
    const finished = await wharf.registry(`${location}?digest=${sha256(big2)}`, { method: "PUT", token });
    assert.equal(finished.status, 403);
    assert.match((await ociErrorOf(finished)).message, /^quota exceeded: acme uses \d+ of \d+ bytes$/);
    for (const digest of [sha256(big), sha256(big2)]) {
      const head = await wharf.registry(`/v2/acme/one/blobs/${digest}`, { method: "HEAD", token });
      assert.equal(head.status, 404, "the refused blob is not in the repo");
      assert.equal(await wharf.store.blobs.get(digest), undefined, "nor recorded at all");
    }
    // A blob the organization already counts adds nothing, so it is accepted even at the limit.
    await pushBlob(wharf, "acme/two", "shared layer", token);
    assert.equal(Number((await usage(acme)).storageBytes), before);
    const exceeded = ofType(await receiver.waitFor((a) => ofType(a, EXCEEDED).length >= 2), EXCEEDED);
    assert.deepEqual(exceeded[0], {
      groupUid: acme,
      storageBytes: String(before),
      requestedBytes: "101",
      quota: { storageBytes: String(before + 100), repoCount: "0" },
    });
  });

  it("refuses a manifest PUT whose new content passes the quota; nothing is recorded; the warning fires once at 80 %", async () => {
    const before = Number((await usage(acme)).storageBytes);
    const image = buildImage("big", ["x".repeat(4_000)]);
    const adds = bytesOf(image);
    // Every blob fits alone; with the manifest the push is one byte too many.
    await expectJson(await setQuota({ storageBytes: String(before + adds - 1) }));
    for (const bytes of image.blobs.values()) await pushBlob(wharf, "acme/one", bytes, token);
    const refused = await putManifest(wharf, "acme/one", "big", image.manifest, token);
    assert.equal(refused.status, 403);
    assert.deepEqual(await ociErrorOf(refused), {
      code: "DENIED",
      message: `quota exceeded: acme uses ${before} of ${before + adds - 1} bytes`,
    });
    for (const reference of ["big", image.digest]) {
      const got = await wharf.registry(`/v2/acme/one/manifests/${reference}`, { token });
      assert.equal(got.status, 404, `no manifest or tag behind ${reference}`);
    }
    assert.equal(Number((await usage(acme)).storageBytes), before, "usage unchanged");
    const refusals = ofType(
      await receiver.waitFor((a) => ofType(a, EXCEEDED).some((b) => b.requestedBytes === String(adds))),
      EXCEEDED,
    );
    assert.equal(refusals.at(-1)?.repository, "acme/one");

    // Exactly at the limit passes, and crosses 80 %: one warning.
    await expectJson(await setQuota({ storageBytes: String(before + adds) }));
    await pushImage(wharf, "acme/one", "big", token, image);
    assert.equal(Number((await usage(acme)).storageBytes), before + adds);
    // Pushing what is counted again adds nothing: no second warning.
    await pushImage(wharf, "acme/two", "big", token, image);
    await receiver.waitFor(
      (a) =>
        a.filter((d) => d.headers["ce-type"] === PUSH && String(d.body).includes("acme/two")).length >= 3,
    );
    const warnings = ofType(receiver.accepted(), WARNING);
    assert.deepEqual(warnings, [
      {
        groupUid: acme,
        storageBytes: String(before + adds),
        requestedBytes: String(adds),
        quota: { storageBytes: String(before + adds), repoCount: "0" },
        repository: "acme/one",
      },
    ]);
    await expectJson(await setQuota({ storageBytes: "0" }));
  });

  it("two pushes racing for the last bytes: exactly one is stored", async () => {
    const before = Number((await usage(acme)).storageBytes);
    const a = buildImage("race-a", ["a".repeat(3_000)]);
    const b = buildImage("race-b", ["b".repeat(3_000)]);
    for (const image of [a, b])
      for (const bytes of image.blobs.values()) await pushBlob(wharf, "acme/race", bytes, token);
    await expectJson(
      await setQuota({ storageBytes: String(before + Math.max(bytesOf(a), bytesOf(b)) + 10) }),
    );
    try {
      const answers = await Promise.all(
        [a, b].map((image, i) => putManifest(wharf, "acme/race", `r${i}`, image.manifest, token)),
      );
      assert.deepEqual(answers.map((r) => r.status).sort(), [201, 403]);
      const winner = answers[0]?.status === 201 ? a : b;
      assert.equal(Number((await usage(acme)).storageBytes), before + bytesOf(winner));
    } finally {
      await expectJson(await setQuota({ storageBytes: "0" }));
    }
  });

  it("refuses a repo past repoCount: CreateRepo FAILED_PRECONDITION QUOTA_EXCEEDED, a push 403 DENIED", async () => {
    const { repoCount } = await usage(acme);
    await expectJson(await setQuota({ repoCount }));
    const body = await expectError(
      await wharf.api(`/registry/v2/repos/${acme}`, {
        method: "POST",
        token: wharf.adminToken,
        body: { name: "extra" },
      }),
      { status: 400, code: 9, reason: "FAILED_PRECONDITION" },
    );
    const violations = detail(body, "PreconditionFailure") as {
      violations: { type: string; description: string }[];
    };
    assert.equal(violations.violations[0]?.type, "QUOTA_EXCEEDED");
    assert.equal(
      violations.violations[0]?.description,
      `quota exceeded: acme has ${repoCount} of ${repoCount} repos`,
    );
    const blob = await wharf.registry(`/v2/acme/extra/blobs/uploads/`, { method: "POST", token });
    assert.equal(blob.status, 403);
    const error = await ociErrorOf(blob);
    assert.equal(error.code, "DENIED");
    assert.match(error.message, /quota exceeded: acme has \d+ of \d+ repos/);
    assert.equal((await usage(acme)).repoCount, repoCount, "no repo was created");
    const refusals = ofType(
      await receiver.waitFor((a) => ofType(a, EXCEEDED).filter((b) => b.repoCount !== undefined).length >= 2),
      EXCEEDED,
    ).filter((b) => b.repoCount !== undefined);
    assert.deepEqual(
      refusals.map((b) => [b.repository, b.repoCount, (b.quota as { repoCount: string }).repoCount]),
      [
        ["extra", repoCount, repoCount],
        ["acme/extra", repoCount, repoCount],
      ],
      "one exceeded event per refused create: the API's (the repo name) and the push's (its path)",
    );
    await expectJson(await setQuota({ repoCount: "0" }));
    await pushImage(wharf, "acme/extra", "v1", token, "extra");
  });

  it("a tag delete frees nothing until garbage collection removes the manifest", async () => {
    const image = await pushImage(wharf, "acme/gc", "v1", token, buildImage("gc", ["only in gc"]));
    const before = Number((await usage(acme)).storageBytes);
    const deleted = await wharf.registry("/v2/acme/gc/manifests/v1", { method: "DELETE", token });
    assert.equal(deleted.status, 202);
    assert.equal(Number((await usage(acme)).storageBytes), before, "the manifest is still stored");
    const report = await collectGarbage(
      { store: wharf.store, blobs: createMemoryBlobDriver(), clock: systemClock },
      { historyWindowMs: 0, graceMs: 0 },
    );
    assert.ok(report.manifests >= 1);
    assert.equal(Number((await usage(acme)).storageBytes), before - bytesOf(image));
    assert.equal(await wharf.store.usage.recount(acme), before - bytesOf(image));
  });

  it("skopeo shows the refusal's message", { skip: skopeoSkip }, async () => {
    const work = await mkdtemp(join(tmpdir(), "wharf-quota-"));
    try {
      const layout = join(work, "layout");
      await writeImageLayout(layout, { tag: "v1", files: { "data.bin": randomBytes(64 * 1024) } });
      const before = Number((await usage(acme)).storageBytes);
      await expectJson(await setQuota({ storageBytes: String(before + 1_000) }));
      const result = await runSkopeo([
        "copy",
        "--dest-tls-verify=false",
        "--dest-creds",
        `_token:${token}`,
        `oci:${layout}:v1`,
        `docker://${new URL(wharf.registryUrl).host}/acme/skopeo:v1`,
      ]);
      assert.notEqual(result.code, 0);
      assert.match(
        result.stderr,
        new RegExp(`quota exceeded: acme uses ${before} of ${before + 1_000} bytes`),
      );
      assert.equal(Number((await usage(acme)).storageBytes), before);
      await expectJson(await setQuota({ storageBytes: "0" }));
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
});
