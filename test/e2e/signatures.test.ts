import assert from "node:assert/strict";
import { after, before, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import * as sigs from "../../src/gen/platform/registry/v2/signatures_pb.js";
import { expectError, expectJson } from "../support/api-assertions.js";
import {
  type CosignKey,
  generateCosignKey,
  pushBundle,
  pushSignatureLayers,
  signImage,
  sigstoreBundle,
} from "../support/cosign.js";
import { forEachEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { personWithRole } from "../support/registered-person.js";
import { buildImage, pushImage } from "../support/registry-push.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

interface Check {
  referrer: string;
  keyUid?: string;
  keyName?: string;
  verified?: boolean;
  reason: string;
  layout: string;
}
interface ApiTag {
  uid: string;
  name: string;
  digest: string;
  verifiedSigners?: { keyUid: string; keyName: string }[];
}

forEachEngine("image signatures: cosign layouts and Sigstore bundles verified against trusted keys", (db) => {
  let wharf: TestServer;
  let client: grpc.Client;
  let admin: string;
  let token: string;
  let org: string;
  let team: string;
  let repo: string;
  let ownerB: string;
  let viewer: string;
  const release = generateCosignKey("ecdsa-p256");
  const ci = generateCosignKey("ed25519");
  const stranger = generateCosignKey("rsa-2048");
  const v1 = buildImage("sig-v1");
  const v2 = buildImage("sig-v2");
  let releaseKey: string;
  let ciKey: string;

  const json = async <T>(path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    expectJson<T>(await wharf.api(path, { token: admin, ...init }));
  const signaturesOf = async (digest: string, as = admin) =>
    (
      await json<{ signatures?: Check[] }>(`/registry/v2/repos/${repo}/digests/${digest}/signatures`, {
        token: as,
      })
    ).signatures ?? [];
  const registerKey = async (parent: string, name: string, key: CosignKey) =>
    (
      await json<{ uid: string }>(`/registry/v2/signingKeys/${parent}`, {
        method: "POST",
        body: { name, publicKeyPem: key.publicKeyPem },
      })
    ).uid;

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer(databaseUrl ? { databaseUrl } : {});
    admin = wharf.adminToken;
    token = await wharf.registryToken();
    client = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
    team = await wharf.create(`/iam/v2/groups/${org}`, { name: "team" });
    const orgB = await wharf.create("/iam/v2/groups", { name: "other" });
    ownerB = (await personWithRole(wharf, "bob", orgB, "owner")).token;
    viewer = (await personWithRole(wharf, "vic", org, "viewer")).token;
    await pushImage(wharf, "acme/team/app", "v1", token, v1);
    await pushImage(wharf, "acme/team/app", "v2", token, v2);
    const repos = await json<{ repos: { uid: string }[] }>(
      `/registry/v2/repos?uidp.children_of=${team}&name=app`,
    );
    repo = repos.repos[0]?.uid as string;
    assert.ok(repo);
    releaseKey = await registerKey(org, "release", release);
    ciKey = await registerKey(repo, "ci", ci);
  });
  after(async () => {
    client?.close();
    await wharf?.close();
  });

  it("an unsigned image has no signatures, and its tag no verified signers", async () => {
    assert.deepEqual(await signaturesOf(v1.digest), []);
    const tag = await json<{ tags: ApiTag[] }>(`/registry/v2/tags?uidp.children_of=${repo}&name=v1`);
    assert.deepEqual(tag.tags[0]?.verifiedSigners ?? [], []);
  });

  it("verifies both cosign layouts against keys at the repo and its organization", async () => {
    const tagged = await signImage({
      registry: wharf,
      token,
      repo: "acme/team/app",
      digest: v1.digest,
      key: release,
      layout: "tag",
    });
    const referred = await signImage({
      registry: wharf,
      token,
      repo: "acme/team/app",
      digest: v1.digest,
      key: ci,
      layout: "referrer",
    });
    const untrusted = await signImage({
      registry: wharf,
      token,
      repo: "acme/team/app",
      digest: v1.digest,
      key: stranger,
      layout: "referrer",
    });
    const checks = await signaturesOf(v1.digest);
    const byReferrer = new Map(checks.map((c) => [c.referrer, c]));
    assert.equal(checks.length, 3);
    assert.deepEqual(byReferrer.get(tagged.referrer), {
      referrer: tagged.referrer,
      keyUid: releaseKey,
      keyName: "release",
      verified: true,
      reason: "verified by key release trusted at acme",
      layout: "cosign-tag",
    });
    assert.deepEqual(byReferrer.get(referred.referrer), {
      referrer: referred.referrer,
      keyUid: ciKey,
      keyName: "ci",
      verified: true,
      reason: "verified by key ci trusted at acme/team/app",
      layout: "cosign-referrer",
    });
    const bad = byReferrer.get(untrusted.referrer);
    assert.equal(bad?.verified ?? false, false);
    assert.equal(bad?.reason, "no trusted key verifies it");
    // A viewer reads them too.
    assert.equal((await signaturesOf(v1.digest, viewer)).length, 3);
  });

  it("shows the verified signers on GetTag and ListTags", async () => {
    const listed = await json<{ tags: ApiTag[] }>(`/registry/v2/tags?uidp.children_of=${repo}&order_by=name`);
    const v1Tag = listed.tags.find((t) => t.name === "v1");
    const v2Tag = listed.tags.find((t) => t.name === "v2");
    assert.deepEqual((v1Tag?.verifiedSigners ?? []).map((s) => s.keyName).sort(), ["ci", "release"]);
    assert.deepEqual(v2Tag?.verifiedSigners ?? [], []);
    const got = await json<ApiTag>(`/registry/v2/tags/${v1Tag?.uid}`);
    assert.deepEqual(got.verifiedSigners, v1Tag?.verifiedSigners);
  });

  it("does not verify a signature copied onto another image", async () => {
    const copied = await signImage({
      registry: wharf,
      token,
      repo: "acme/team/app",
      digest: v2.digest,
      key: release,
      layout: "referrer",
      payloadDigest: v1.digest,
    });
    const [check] = await signaturesOf(v2.digest);
    assert.equal(check?.referrer, copied.referrer);
    assert.equal(check?.verified ?? false, false);
    assert.equal(check?.reason, `payload names ${v1.digest}, not this image`);
  });

  it("verifies a keyed Sigstore bundle referrer", async () => {
    const image = buildImage("sig-bundle");
    await pushImage(wharf, "acme/team/app", "bundled", token, image);
    const bundle = await sigstoreBundle({ key: ci, kind: "dsse", subjectDigest: image.digest });
    const referrer = await pushBundle({
      registry: wharf,
      token,
      repo: "acme/team/app",
      digest: image.digest,
      bundle,
    });
    assert.deepEqual(await signaturesOf(image.digest), [
      {
        referrer,
        keyUid: ciKey,
        keyName: "ci",
        verified: true,
        reason: "verified by key ci trusted at acme/team/app",
        layout: "sigstore-bundle",
      },
    ]);
  });

  it("a deleted key stops verifying at the next call", async () => {
    const image = buildImage("sig-delete");
    await pushImage(wharf, "acme/team/app", "rotating", token, image);
    const temp = generateCosignKey("ecdsa-p384");
    const tempKey = await registerKey(org, "temp", temp);
    await signImage({
      registry: wharf,
      token,
      repo: "acme/team/app",
      digest: image.digest,
      key: temp,
      layout: "tag",
    });
    assert.equal((await signaturesOf(image.digest))[0]?.verified, true);
    await expectJson(
      await wharf.api(`/registry/v2/signingKeys/${tempKey}`, { method: "DELETE", token: admin }),
    );
    const [check] = await signaturesOf(image.digest);
    assert.equal(check?.verified ?? false, false);
    assert.equal(check?.reason, "no trusted key verifies it");
  });

  it("answers bad content with reasons, never an error", async () => {
    const image = buildImage("sig-bad");
    await pushImage(wharf, "acme/team/app", "bad", token, image);
    await pushSignatureLayers(
      wharf,
      "acme/team/app",
      image.digest,
      [{ payload: Buffer.from("{not json"), signature: "not*base64" }],
      "tag",
      token,
    );
    assert.deepEqual(
      (await signaturesOf(image.digest)).map((c) => c.reason),
      ["malformed signature annotation: not base64"],
    );
  });

  it("answers over gRPC as over REST", async () => {
    const { response, error } = await grpcCall(
      client,
      "/platform.registry.v2.SignaturesService/ListSignatures",
      { input: sigs.ListSignaturesRequestSchema, output: sigs.ListSignaturesResponseSchema },
      create(sigs.ListSignaturesRequestSchema, { repoUid: repo, digest: v1.digest }),
      admin,
    );
    assert.equal(error, undefined);
    assert.equal(response?.signatures.filter((s) => s.verified).length, 2);
  });

  it("is NOT_FOUND for a digest the repo lacks, INVALID_ARGUMENT for a bad one, refused across organizations", async () => {
    await expectError(
      await wharf.api(`/registry/v2/repos/${repo}/digests/sha256:${"0".repeat(64)}/signatures`, {
        token: admin,
      }),
      { status: 404, code: 5 },
    );
    await expectError(
      await wharf.api(`/registry/v2/repos/${repo}/digests/nope/signatures`, { token: admin }),
      {
        status: 400,
        code: 3,
      },
    );
    const res = await wharf.api(`/registry/v2/repos/${repo}/digests/${v1.digest}/signatures`, {
      token: ownerB,
    });
    assert.equal(res.status, 403, await res.text());
  });
});
