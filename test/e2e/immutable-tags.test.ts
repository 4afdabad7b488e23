import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { create, fromBinary } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import * as grpc from "@grpc/grpc-js";
import { ErrorInfoSchema } from "../../src/gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../../src/gen/google/rpc/status_pb.js";
import * as imm from "../../src/gen/platform/registry/v2/immutability_pb.js";
import * as tags from "../../src/gen/platform/registry/v2/tags_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { personWithRole } from "../support/registered-person.js";
import {
  type BuiltImage,
  buildImage,
  OCI_MANIFEST,
  ociErrorOf,
  pushImage,
  putManifest,
  sha256,
} from "../support/registry-push.js";
import {
  type ReceivedDelivery,
  startWebhookReceiver,
  type WebhookReceiver,
} from "../support/webhook-receiver.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

type Json = Record<string, unknown>;
interface Rule {
  uid: string;
  tagPatterns: string[];
  description: string;
  createTime: string;
  updateTime: string;
}
interface ApiTag {
  uid: string;
  name: string;
  digest: string;
}

/** The ErrorInfo reason of a grpc-js error (from grpc-status-details-bin). */
function grpcReason(error: grpc.ServiceError | undefined): string | undefined {
  const raw = error?.metadata.get("grpc-status-details-bin")[0];
  if (!(raw instanceof Buffer)) return undefined;
  for (const d of fromBinary(StatusSchema, raw).details) {
    const info = anyUnpack(d, ErrorInfoSchema);
    if (info) return info.reason;
  }
  return undefined;
}

/** A referrer of `subject` (an artifact manifest with a `subject`), as a signature tool pushes one. */
function referrerOf(subject: BuiltImage, seed: string): { manifest: Buffer; blobs: Buffer[] } {
  const layer = Buffer.from(`signature ${seed}`);
  const config = Buffer.from("{}");
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      artifactType: "application/vnd.example.signature",
      config: { mediaType: "application/vnd.oci.empty.v1+json", digest: sha256(config), size: config.length },
      layers: [{ mediaType: "application/vnd.example.sig", digest: sha256(layer), size: layer.length }],
      subject: { mediaType: OCI_MANIFEST, digest: subject.digest, size: subject.manifest.length },
    }),
  );
  return { manifest, blobs: [config, layer] };
}

forEachEngine("immutable tags: rules over REST and gRPC, enforced by the registry and the API", (db) => {
  let wharf: TestServer;
  let receiver: WebhookReceiver;
  let client: grpc.Client;
  let admin: string;
  let registryToken: string;
  let org: string;
  let team: string;
  let svcRepo: string;
  let ownerB: string;
  let viewer: string;
  const v1 = buildImage("imm-v1");
  const v2 = buildImage("imm-v2");

  const api = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    wharf.api(path, { token: admin, ...init });
  const json = async <T = Json>(
    path: string,
    init: { method?: string; body?: unknown; token?: string } = {},
  ) => expectJson<T>(await api(path, init));
  const tagOf = async (repo: string, name: string) =>
    (await json<{ tags?: ApiTag[] }>(`/registry/v2/tags?uidp.children_of=${repo}&name=${name}`)).tags?.[0];
  const newRule = (parent: string, tagPatterns: string[], description = "") =>
    json<Rule>(`/registry/v2/immutabilityRules/${parent}`, {
      method: "POST",
      body: { tagPatterns, description },
    });

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer({
      ...(databaseUrl ? { databaseUrl } : {}),
      config: { eventsAllowLoopback: "true" },
    });
    admin = wharf.adminToken;
    registryToken = await wharf.registryToken();
    client = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    receiver = await startWebhookReceiver();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    team = await wharf.create(`/iam/v2/groups/${org}`, { name: "team" });
    await wharf.create(`/events/v2/subscriptions/${org}`, { sink: receiver.url("/hook") });
    const orgB = await wharf.create("/iam/v2/groups", { name: "other" });
    ownerB = (await personWithRole(wharf, "bob", orgB, "owner")).token;
    viewer = (await personWithRole(wharf, "vic", org, "viewer")).token;
    await pushImage(wharf, "acme/team/svc", "seed", registryToken, v1);
    const repos = await json<{ repos: { uid: string }[] }>(
      `/registry/v2/repos?uidp.children_of=${team}&name=svc`,
    );
    svcRepo = repos.repos[0]?.uid as string;
    assert.ok(svcRepo);
  });
  after(async () => {
    client?.close();
    await wharf?.close();
    await receiver?.close();
  });

  it("creates, reads, lists, updates and deletes a rule, each change an event", async () => {
    const created = await newRule(org, ["release-*", "!release-*-rc*"], "releases");
    assert.match(created.uid, new RegExp(`^${org}/[0-9a-f]{16}$`));
    assert.deepEqual(created.tagPatterns, ["release-*", "!release-*-rc*"]);
    assert.equal(created.description, "releases");
    assert.deepEqual(await json<Rule>(`/registry/v2/immutabilityRules/${created.uid}`), created);

    const atRepo = await newRule(svcRepo, ["pinned"]);
    const listed = await json<{ immutabilityRules: Rule[]; totalCount: string }>(
      `/registry/v2/immutabilityRules?uidp.descendants_of=${org}&order_by=create_time`,
    );
    assert.deepEqual(
      listed.immutabilityRules.map((r) => r.uid),
      [created.uid, atRepo.uid],
    );
    assert.equal(listed.totalCount, "2");
    const children = await json<{ immutabilityRules: Rule[] }>(
      `/registry/v2/immutabilityRules?uidp.children_of=${svcRepo}`,
    );
    assert.deepEqual(
      children.immutabilityRules.map((r) => r.uid),
      [atRepo.uid],
    );
    // A viewer lists and reads; B's owner sees nothing of acme's rules.
    const seen = await json<{ immutabilityRules?: Rule[] }>(
      `/registry/v2/immutabilityRules?uidp.descendants_of=${org}`,
      { token: viewer },
    );
    assert.equal(seen.immutabilityRules?.length, 2);
    const unseen = await json<{ immutabilityRules?: Rule[] }>(
      `/registry/v2/immutabilityRules?uidp.descendants_of=${org}`,
      { token: ownerB },
    );
    assert.deepEqual(unseen.immutabilityRules ?? [], []);

    const patched = await json<Rule>(
      `/registry/v2/immutabilityRules/${created.uid}?updateMask=tag_patterns`,
      {
        method: "PATCH",
        body: { tagPatterns: ["release-[0-9]*"], description: "ignored: not in the mask" },
      },
    );
    assert.deepEqual(patched.tagPatterns, ["release-[0-9]*"]);
    assert.equal(patched.description, "releases");
    assert.equal(patched.createTime, created.createTime);

    await json(`/registry/v2/immutabilityRules/${created.uid}`, { method: "DELETE" });
    await json(`/registry/v2/immutabilityRules/${atRepo.uid}`, { method: "DELETE" });
    await expectError(await api(`/registry/v2/immutabilityRules/${created.uid}`), { status: 404, code: 5 });
    await expectError(await api(`/registry/v2/immutabilityRules/${created.uid}`, { method: "DELETE" }), {
      status: 404,
      code: 5,
    });

    const typesAbout = (all: ReceivedDelivery[]) =>
      all.filter((d) => d.headers["ce-subject"] === created.uid).map((d) => String(d.headers["ce-type"]));
    const delivered = await receiver.waitFor((all) => typesAbout(all).length === 3);
    assert.deepEqual(typesAbout(delivered), [
      "dev.wharf.api.registry.immutability_rule.created.v1",
      "dev.wharf.api.registry.immutability_rule.updated.v1",
      "dev.wharf.api.registry.immutability_rule.deleted.v1",
    ]);
  });

  it("refuses bad patterns, naming the pattern, a missing parent and another organization's caller", async () => {
    const bad = async (body: unknown, field: string) =>
      expectError(await api(`/registry/v2/immutabilityRules/${org}`, { method: "POST", body }), {
        status: 400,
        code: 3,
        field,
      });
    await bad({ tagPatterns: [] }, "tag_patterns");
    await bad({ tagPatterns: ["v*", "v[1"] }, "tag_patterns[1]");
    await bad({ tagPatterns: ["a/b"] }, "tag_patterns[0]");
    await bad({ tagPatterns: ["!!x"] }, "tag_patterns[0]");
    await bad({ tagPatterns: ["{a,b}"] }, "tag_patterns[0]");
    await bad({ tagPatterns: ["v*"], description: "line\nbreak" }, "description");
    await bad({ tagPatterns: Array.from({ length: 51 }, (_, i) => `t${i}`) }, "tag_patterns");
    const rule = await newRule(org, ["never-*"]);
    await expectError(
      await api(`/registry/v2/immutabilityRules/${rule.uid}`, {
        method: "PATCH",
        body: { tagPatterns: ["ok", "[]"] },
      }),
      { status: 400, code: 3, field: "tag_patterns[1]" },
    );
    await expectError(
      await api(`/registry/v2/immutabilityRules/${org}/0123456789abcdef`, {
        method: "POST",
        body: { tagPatterns: ["v*"] },
      }),
      { status: 404, code: 5 },
    );
    // B's owner can create nothing under acme, nor read, change or delete acme's rule.
    await expectError(
      await api(`/registry/v2/immutabilityRules/${org}`, {
        method: "POST",
        token: ownerB,
        body: { tagPatterns: ["*"] },
      }),
      { status: 403, code: 7 },
    );
    for (const method of ["GET", "PATCH", "DELETE"]) {
      await expectError(
        await api(`/registry/v2/immutabilityRules/${rule.uid}`, {
          method,
          token: ownerB,
          ...(method === "PATCH" ? { body: { description: "x" } } : {}),
        }),
        { status: 403, code: 7 },
      );
    }
    // A viewer of acme reads but does not write.
    await expectError(
      await api(`/registry/v2/immutabilityRules/${org}`, {
        method: "POST",
        token: viewer,
        body: { tagPatterns: ["*"] },
      }),
      { status: 403, code: 7 },
    );
    await json(`/registry/v2/immutabilityRules/${rule.uid}`, { method: "DELETE" });
  });

  it("keeps a protected tag where it is in the registry: moves and deletes refused with the rule named, same digest and new tags pushed", async () => {
    const rule = await newRule(team, ["v*", "!v*-rc*"]);
    await pushImage(wharf, "acme/team/svc", "v1.2", registryToken, v1);
    await pushImage(wharf, "acme/team/svc", "v1.2", registryToken, v1); // the same digest: not a move
    await pushImage(wharf, "acme/team/svc", "v2-rc1", registryToken, v2);
    const moved = await putManifest(wharf, "acme/team/svc", "v1.2", v2.manifest, registryToken);
    assert.equal(moved.status, 403);
    assert.deepEqual(await ociErrorOf(moved), {
      code: "DENIED",
      message: `tag v1.2 of acme/team/svc is immutable (rule ${rule.uid})`,
      detail: { rule: rule.uid },
    });
    assert.equal((await tagOf(svcRepo, "v1.2"))?.digest, v1.digest);

    // Excluded by "!v*-rc*": moves freely.
    await pushImage(wharf, "acme/team/svc", "v2-rc1", registryToken, v1);
    assert.equal((await tagOf(svcRepo, "v2-rc1"))?.digest, v1.digest);

    const byTag = await wharf.registry("/v2/acme/team/svc/manifests/v1.2", {
      method: "DELETE",
      token: registryToken,
    });
    assert.equal(byTag.status, 403);
    assert.equal(
      (await ociErrorOf(byTag)).message,
      `tag v1.2 of acme/team/svc is immutable (rule ${rule.uid})`,
    );
    const byDigest = await wharf.registry(`/v2/acme/team/svc/manifests/${v1.digest}`, {
      method: "DELETE",
      token: registryToken,
    });
    assert.equal(byDigest.status, 403);
    assert.equal(
      (await ociErrorOf(byDigest)).message,
      `tag v1.2 of acme/team/svc is immutable (rule ${rule.uid})`,
    );
    const still = await wharf.registry(`/v2/acme/team/svc/manifests/${v1.digest}`, { token: registryToken });
    assert.equal(still.status, 200, "nothing was deleted");
    assert.equal((await tagOf(svcRepo, "v2-rc1"))?.digest, v1.digest, "not even the unprotected tag");

    // Referrers can always be added: by digest, and under the fallback tag of the referrers tag schema.
    const sig = referrerOf(v1, "one");
    for (const blob of sig.blobs) {
      const up = await wharf.registry(`/v2/acme/team/svc/blobs/uploads/?digest=${sha256(blob)}`, {
        method: "POST",
        token: registryToken,
        headers: { "content-type": "application/octet-stream" },
        body: blob,
      });
      assert.equal(up.status, 201, await up.text());
    }
    const referrer = await putManifest(
      wharf,
      "acme/team/svc",
      sha256(sig.manifest),
      sig.manifest,
      registryToken,
    );
    assert.equal(referrer.status, 201, await referrer.text());
    // A subject does not let a manifest take a protected tag.
    const underTag = await putManifest(wharf, "acme/team/svc", "v1.2", sig.manifest, registryToken);
    assert.equal(underTag.status, 403);
    assert.equal((await ociErrorOf(underTag)).code, "DENIED");
    const star = await newRule(svcRepo, ["*"]);
    const fallback = `sha256-${v1.digest.slice("sha256:".length)}`;
    const first = await putManifest(wharf, "acme/team/svc", fallback, sig.manifest, registryToken);
    assert.equal(first.status, 201, await first.text());
    const again = await putManifest(wharf, "acme/team/svc", fallback, v2.manifest, registryToken);
    assert.equal(again.status, 201, `the fallback tag moves under "*": ${await again.text()}`);
    await json(`/registry/v2/immutabilityRules/${star.uid}`, { method: "DELETE" });

    // Once the rule is gone, the tag moves again.
    await json(`/registry/v2/immutabilityRules/${rule.uid}`, { method: "DELETE" });
    const free = await putManifest(wharf, "acme/team/svc", "v1.2", v2.manifest, registryToken);
    assert.equal(free.status, 201, await free.text());
    await pushImage(wharf, "acme/team/svc", "v1.2", registryToken, v1);
  });

  it("refuses CreateTag moving, DeleteTag and RestoreTag of a protected tag with TAG_IMMUTABLE, over REST and gRPC", async () => {
    // v2 is in the tag's history, so a restore to it would be possible but for the rule.
    await pushImage(wharf, "acme/team/svc", "stable", registryToken, v2);
    await pushImage(wharf, "acme/team/svc", "stable", registryToken, v1);
    const stable = (await tagOf(svcRepo, "stable")) as ApiTag;
    const rule = await newRule(org, ["stable"]);

    const precondition = async (res: Response) => {
      const body = await expectError(res, { status: 400, code: 9, reason: "FAILED_PRECONDITION" });
      const failure = body.details.find((d) => d["@type"].endsWith("PreconditionFailure")) as unknown as {
        violations: { type: string; subject: string; description: string }[];
      };
      const violations = failure.violations;
      assert.deepEqual(violations, [
        {
          type: "TAG_IMMUTABLE",
          subject: stable.uid,
          description: `tag stable is immutable (rule ${rule.uid})`,
        },
      ]);
    };
    await precondition(
      await api(`/registry/v2/tags/${svcRepo}`, {
        method: "POST",
        body: { name: "stable", digest: v2.digest },
      }),
    );
    await precondition(await api(`/registry/v2/tags/${stable.uid}`, { method: "DELETE" }));
    await precondition(
      await api(`/registry/v2/tags/${stable.uid}:restore`, { method: "POST", body: { digest: v2.digest } }),
    );
    // Writing the digest it names (a deprecation flag, say) is not a move.
    const same = await json<ApiTag & { deprecated: boolean }>(`/registry/v2/tags/${svcRepo}`, {
      method: "POST",
      body: { name: "stable", digest: v1.digest, deprecated: true },
    });
    assert.equal(same.deprecated, true);

    const moved = await grpcCall(
      client,
      "/platform.registry.v2.TagsService/CreateTag",
      { input: tags.CreateTagRequestSchema, output: tags.TagSchema },
      create(tags.CreateTagRequestSchema, { parent: svcRepo, tag: { name: "stable", digest: v2.digest } }),
      admin,
    );
    assert.equal(moved.error?.code, grpc.status.FAILED_PRECONDITION);
    assert.equal(grpcReason(moved.error), "FAILED_PRECONDITION");
    assert.match(moved.error?.details ?? "", new RegExp(`tag stable is immutable \\(rule ${rule.uid}\\)`));
    const deleted = await grpcCall(
      client,
      "/platform.registry.v2.TagsService/DeleteTag",
      { input: tags.DeleteTagRequestSchema, output: tags.TagSchema },
      create(tags.DeleteTagRequestSchema, { uid: stable.uid }),
      admin,
    );
    assert.equal(deleted.error?.code, grpc.status.FAILED_PRECONDITION);
    assert.equal((await tagOf(svcRepo, "stable"))?.digest, v1.digest);
    // Deleting the repo would delete the tag.
    const repoGone = await expectError(await api(`/registry/v2/repos/${svcRepo}`, { method: "DELETE" }), {
      status: 400,
      code: 9,
      reason: "FAILED_PRECONDITION",
    });
    assert.match(repoGone.message, new RegExp(`tag stable, which is immutable \\(rule ${rule.uid}\\)`));
    assert.equal((await tagOf(svcRepo, "stable"))?.digest, v1.digest);
    // A repo without protected tags goes as before.
    await pushImage(wharf, "acme/team/spare", "stable-ish", registryToken, v1);
    const spare = await json<{ repos: { uid: string }[] }>(
      `/registry/v2/repos?uidp.children_of=${team}&name=spare`,
    );
    await json(`/registry/v2/repos/${spare.repos[0]?.uid}`, { method: "DELETE" });

    // Rules over gRPC: list, update, delete.
    const listed = await grpcCall(
      client,
      "/platform.registry.v2.ImmutabilityRulesService/ListImmutabilityRules",
      { input: imm.ListImmutabilityRulesRequestSchema, output: imm.ListImmutabilityRulesResponseSchema },
      create(imm.ListImmutabilityRulesRequestSchema, { uidp: { childrenOf: org } }),
      viewer,
    );
    assert.equal(listed.error, undefined, listed.error?.details);
    assert.deepEqual(
      listed.response?.immutabilityRules.map((r) => [r.uid, r.tagPatterns]),
      [[rule.uid, ["stable"]]],
    );
    const updated = await grpcCall(
      client,
      "/platform.registry.v2.ImmutabilityRulesService/UpdateImmutabilityRule",
      { input: imm.UpdateImmutabilityRuleRequestSchema, output: imm.ImmutabilityRuleSchema },
      create(imm.UpdateImmutabilityRuleRequestSchema, {
        immutabilityRule: { uid: rule.uid, tagPatterns: ["stable", "[bad"] },
      }),
      admin,
    );
    assert.equal(updated.error?.code, grpc.status.INVALID_ARGUMENT);
    const gone = await grpcCall(
      client,
      "/platform.registry.v2.ImmutabilityRulesService/DeleteImmutabilityRule",
      { input: imm.DeleteImmutabilityRuleRequestSchema, output: tags.TagSchema },
      create(imm.DeleteImmutabilityRuleRequestSchema, { uid: rule.uid }),
      admin,
    );
    assert.equal(gone.error, undefined, gone.error?.details);
    await json(`/registry/v2/tags/${stable.uid}`, { method: "DELETE" });
  });
});
