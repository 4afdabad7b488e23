import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { ADMIN_IDENTITY_UID } from "../../src/authz/admin-identity.js";
import * as sbomPb from "../../src/gen/platform/registry/v2/sbom_pb.js";
import { createSbomReader } from "../../src/registry/supply-chain/sbom/sbom-reader.js";
import type { SbomReader } from "../../src/registry/supply-chain/supply-chain.js";
import { openBlobDriver } from "../../src/storage/blobs/open-blob-driver.js";
import { detail, expectError, expectJson } from "../support/api-assertions.js";
import { forEachEngine } from "../support/databases.js";
import { grpcCall } from "../support/grpc-call.js";
import { personWithRole } from "../support/registered-person.js";
import {
  type BuiltImage,
  buildImage,
  OCI_MANIFEST,
  pushImage,
  putManifest,
  sha256,
} from "../support/registry-push.js";
import { attachReferrer } from "../support/sbom-referrer.js";
import { startTestServer, type TestServer } from "../support/wharf-server.js";

const FIXTURES = new URL("../fixtures/sbom/", import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES));
const LONG_TTL = 24 * 3600;
const DSSE = "application/vnd.dsse.envelope.v1+json";
const IN_TOTO = "application/vnd.in-toto+json";

interface SbomJson {
  format: string;
  referrer: string;
  packages?: { name: string; version?: string; purl?: string; license?: string }[];
}

forEachEngine("SBOMs of images", (db) => {
  let wharf: TestServer;
  let now = Date.UTC(2026, 10, 20, 12);
  const clock = { now: () => now };
  let admin: string;
  let registryToken: string;
  let acme: string;
  let repoUid: string;
  let reader: SbomReader;
  let grpcClient: grpc.Client;
  const images: Record<string, BuiltImage> = {};

  const sbomPath = (digest: string, query = "") =>
    `/registry/v2/repos/${repoUid}/digests/${digest}/sbom${query ? `?query=${encodeURIComponent(query)}` : ""}`;
  const attach = (image: BuiltImage, doc: Buffer, opts: Parameters<typeof attachReferrer>[5]) =>
    attachReferrer(wharf, "acme/app", registryToken, image.digest, doc, {
      subjectSize: image.manifest.length,
      ...opts,
    });

  before(async () => {
    const { databaseUrl } = db.engine === "postgres" ? await db.freshOptions() : {};
    wharf = await startTestServer({ clock, ...(databaseUrl ? { databaseUrl } : {}) });
    admin = await wharf.tokenFor(ADMIN_IDENTITY_UID, LONG_TTL);
    registryToken = await wharf.registryToken(undefined, LONG_TTL);
    acme = await wharf.create("/iam/v2/groups", { name: "acme" });
    for (const name of ["spdx", "none", "att", "sbomtag", "broken", "newest", "buildx"])
      images[name] = await pushImage(wharf, "acme/app", name, registryToken, buildImage(`sbom-${name}`));
    const repos = await expectJson<{ repos: { uid: string }[] }>(
      await wharf.api(`/registry/v2/repos?uidp.descendants_of=${acme}&name=app`, { token: admin }),
    );
    repoUid = repos.repos[0]?.uid as string;
    assert.ok(repoUid);
    // A reader of its own over the same store and blobs: what another server process would see.
    reader = createSbomReader({ store: wharf.store, blobs: await openBlobDriver("", wharf.dataDir) });
    grpcClient = new grpc.Client(new URL(wharf.apiUrl).host, grpc.credentials.createInsecure());
  });
  after(async () => {
    grpcClient?.close();
    await wharf?.close();
  });

  it("answers the packages of an SPDX referrer (oras attach --artifact-type application/spdx+json)", async () => {
    const image = images.spdx as BuiltImage;
    assert.equal(await reader.hasSbom(repoUid, image.digest), false);
    const referrer = await attach(image, fixture("spdx-2.3.json"), {
      artifactType: "application/spdx+json",
      layerMediaType: "application/spdx+json",
    });
    assert.equal(await reader.hasSbom(repoUid, image.digest), true);
    const sbom = await expectJson<SbomJson>(await wharf.api(sbomPath(image.digest), { token: admin }));
    assert.equal(sbom.format, "SPDX-2.3");
    assert.equal(sbom.referrer, referrer);
    assert.deepEqual(
      sbom.packages?.map((p) => [p.name, p.version ?? "", p.license ?? ""]),
      [
        ["alpine-baselayout", "3.6.5-r0", "GPL-2.0-only"],
        ["libssl3", "3.3.2-r0", "Apache-2.0"],
        ["busybox", "1.36.1-r29", "GPL-2.0-only"],
        ["golang.org/x/net", "v0.23.0", ""],
        ["app", "", "MIT OR Apache-2.0"],
      ],
    );
    assert.equal(
      sbom.packages?.[1]?.purl,
      "pkg:apk/alpine/libssl3@3.3.2-r0?arch=x86_64&distro=alpine-3.20.3",
    );
    // query filters by name or purl, case-insensitively.
    const filtered = await expectJson<SbomJson>(
      await wharf.api(sbomPath(image.digest, "SSL"), { token: admin }),
    );
    assert.deepEqual(
      filtered.packages?.map((p) => p.name),
      ["libssl3"],
    );
    const byPurl = await expectJson<SbomJson>(
      await wharf.api(sbomPath(image.digest, "pkg:golang"), { token: admin }),
    );
    assert.deepEqual(
      byPurl.packages?.map((p) => p.name),
      ["golang.org/x/net"],
    );
  });

  it("reads cosign's .att tag (DSSE layer annotated predicateType) and .sbom tag layouts", async () => {
    const att = images.att as BuiltImage;
    const attTag = `${att.digest.replace(":", "-")}.att`;
    const attDigest = await attach(att, fixture("cyclonedx-1.6.dsse.json"), {
      layerMediaType: DSSE,
      layerAnnotations: { predicateType: "https://cyclonedx.org/bom" },
      tag: attTag,
    });
    assert.equal(await reader.hasSbom(repoUid, att.digest), true);
    const fromAtt = await expectJson<SbomJson>(await wharf.api(sbomPath(att.digest), { token: admin }));
    assert.equal(fromAtt.format, "CycloneDX-1.6");
    assert.equal(fromAtt.referrer, attDigest);
    assert.deepEqual(
      fromAtt.packages?.map((p) => p.name),
      ["web", "express", "cookie", "internal", "glibc"],
    );

    const tagged = images.sbomtag as BuiltImage;
    await attach(tagged, fixture("cyclonedx-1.5.json"), {
      layerMediaType: "application/vnd.cyclonedx+json",
      tag: `${tagged.digest.replace(":", "-")}.sbom`,
    });
    const fromSbomTag = await expectJson<SbomJson>(
      await wharf.api(sbomPath(tagged.digest), { token: admin }),
    );
    assert.equal(fromSbomTag.format, "CycloneDX-1.5");
    assert.equal(fromSbomTag.packages?.length, 5);
  });

  it("answers the newest SBOM when several are attached (cosign attest as OCI 1.1 referrers, in-toto)", async () => {
    const image = images.newest as BuiltImage;
    await attach(image, fixture("spdx-2.3.intoto.json"), {
      artifactType: IN_TOTO,
      layerMediaType: IN_TOTO,
      layerAnnotations: { "in-toto.io/predicate-type": "https://spdx.dev/Document" },
    });
    const first = await expectJson<SbomJson>(await wharf.api(sbomPath(image.digest), { token: admin }));
    assert.equal(first.format, "SPDX-2.3");
    now += 60_000;
    // A provenance attestation is not an SBOM: it changes nothing.
    await attach(
      image,
      Buffer.from(
        '{"_type":"https://in-toto.io/Statement/v1","predicateType":"https://slsa.dev/provenance/v1","predicate":{}}',
      ),
      {
        artifactType: IN_TOTO,
        layerMediaType: IN_TOTO,
        layerAnnotations: { "in-toto.io/predicate-type": "https://slsa.dev/provenance/v1" },
      },
    );
    now += 60_000;
    const newer = await attach(image, fixture("cyclonedx-1.5.dsse.json"), {
      artifactType: DSSE,
      layerMediaType: DSSE,
      manifestAnnotations: { "in-toto.io/predicate-type": "https://cyclonedx.org/bom" },
    });
    const second = await expectJson<SbomJson>(await wharf.api(sbomPath(image.digest), { token: admin }));
    assert.equal(second.format, "CycloneDX-1.5");
    assert.equal(second.referrer, newer);
  });

  it("reads docker buildx's attestation manifest stored in the image's index; the index has none of its own", async () => {
    const image = images.buildx as BuiltImage;
    const attestation = await attach(image, fixture("spdx-2.3.intoto.json"), {
      layerMediaType: IN_TOTO,
      layerAnnotations: { "in-toto.io/predicate-type": "https://spdx.dev/Document" },
      detached: true,
    });
    const attestationManifest = await wharf.registry(`/v2/acme/app/manifests/${attestation}`, {
      token: registryToken,
      headers: { accept: "application/vnd.oci.image.manifest.v1+json" },
    });
    const attestationSize = (await attestationManifest.arrayBuffer()).byteLength;
    const index = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.index.v1+json",
        manifests: [
          {
            mediaType: OCI_MANIFEST,
            digest: image.digest,
            size: image.manifest.length,
            platform: { architecture: "amd64", os: "linux" },
          },
          {
            mediaType: OCI_MANIFEST,
            digest: attestation,
            size: attestationSize,
            platform: { architecture: "unknown", os: "unknown" },
            annotations: {
              "vnd.docker.reference.digest": image.digest,
              "vnd.docker.reference.type": "attestation-manifest",
            },
          },
        ],
      }),
    );
    const put = await putManifest(
      wharf,
      "acme/app",
      "buildx",
      index,
      registryToken,
      "application/vnd.oci.image.index.v1+json",
    );
    assert.equal(put.status, 201, await put.text());
    assert.equal(await reader.hasSbom(repoUid, image.digest), true);
    const sbom = await expectJson<SbomJson>(await wharf.api(sbomPath(image.digest), { token: admin }));
    assert.equal(sbom.format, "SPDX-2.3");
    assert.equal(sbom.referrer, attestation);
    // No fallback between an index and its images.
    assert.equal(await reader.hasSbom(repoUid, sha256(index)), false);
    await expectError(await wharf.api(sbomPath(sha256(index)), { token: admin }), { status: 404, code: 5 });
  });

  it("NOT_FOUND, with how to attach one, for an image without an SBOM; and for a missing image", async () => {
    const image = images.none as BuiltImage;
    assert.equal(await reader.hasSbom(repoUid, image.digest), false);
    assert.equal(await reader.sbom(repoUid, image.digest), undefined);
    const body = await expectError(await wharf.api(sbomPath(image.digest), { token: admin }), {
      status: 404,
      code: 5,
      reason: "NOT_FOUND",
    });
    assert.match(body.message, /has no SBOM attached .*cosign attest --type spdxjson/);
    await expectError(await wharf.api(sbomPath(`sha256:${"0".repeat(64)}`), { token: admin }), {
      status: 404,
      code: 5,
      reason: "NOT_FOUND",
    });
    await expectError(await wharf.api(sbomPath("latest"), { token: admin }), {
      status: 400,
      code: 3,
      field: "digest",
    });
  });

  it("FAILED_PRECONDITION SBOM_UNREADABLE naming the referrer and the problem for a malformed SBOM", async () => {
    const image = images.broken as BuiltImage;
    const referrer = await attach(
      image,
      Buffer.from('{"spdxVersion": "SPDX-2.3", "packages": [{"name": 1}]}'),
      {
        artifactType: "application/spdx+json",
        layerMediaType: "application/spdx+json",
      },
    );
    // Recognised without parsing: a policy's requireSbom counts it.
    assert.equal(await reader.hasSbom(repoUid, image.digest), true);
    const body = await expectError(await wharf.api(sbomPath(image.digest), { token: admin }), {
      status: 400,
      code: 9,
      reason: "FAILED_PRECONDITION",
    });
    const violations = (detail(body, "PreconditionFailure")?.violations ?? []) as {
      type: string;
      description: string;
    }[];
    assert.equal(violations[0]?.type, "SBOM_UNREADABLE");
    assert.match(
      violations[0]?.description ?? "",
      new RegExp(`${referrer}: packages\\[0\\]\\.name must be a string`),
    );
  });

  it("answers over gRPC", async () => {
    const image = images.spdx as BuiltImage;
    const got = await grpcCall(
      grpcClient,
      "/platform.registry.v2.SbomService/GetSbom",
      { input: sbomPb.GetSbomRequestSchema, output: sbomPb.SbomSchema },
      create(sbomPb.GetSbomRequestSchema, { repoUid, digest: image.digest, query: "busybox" }),
      admin,
    );
    assert.equal(got.error, undefined, got.error?.details);
    assert.equal(got.response?.format, "SPDX-2.3");
    assert.deepEqual(
      got.response?.packages.map((p) => [p.name, p.version, p.license]),
      [["busybox", "1.36.1-r29", "GPL-2.0-only"]],
    );
  });

  it("a viewer of the organization reads it; another organization's owner is refused", async () => {
    const image = images.spdx as BuiltImage;
    const viewer = await personWithRole(wharf, "sbom-viewer", acme, "viewer", { bindingToken: admin });
    await expectJson(await wharf.api(sbomPath(image.digest), { token: viewer.token }));
    const globex = await wharf.create("/iam/v2/groups", { name: "globex" }, admin);
    const outsider = await personWithRole(wharf, "globex-owner", globex, "owner", { bindingToken: admin });
    await expectError(await wharf.api(sbomPath(image.digest), { token: outsider.token }), {
      status: 403,
      code: 7,
    });
    await expectError(await wharf.api(sbomPath(image.digest)), { status: 401, code: 16 });
  });
});
