import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { OciError, toOciError } from "../../../src/oci/oci-errors.js";
import {
  DOCKER_MANIFEST,
  DOCKER_MANIFEST_LIST,
  OCI_INDEX,
  OCI_MANIFEST,
  parseManifest,
} from "../../../src/registry/manifest-parser.js";

const d = (n: number) => `sha256:${n.toString(16).padStart(64, "0")}`;
const desc = (n: number, mediaType = "application/octet-stream", extra = {}) => ({
  mediaType,
  digest: d(n),
  size: n,
  ...extra,
});
const bytes = (doc: unknown) => Buffer.from(JSON.stringify(doc));
const image = (extra = {}) => ({
  schemaVersion: 2,
  config: desc(1, "application/vnd.oci.image.config.v1+json"),
  layers: [
    desc(2),
    desc(3, "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", { urls: ["https://x"] }),
  ],
  ...extra,
});

function invalid(content: unknown, contentType?: string): string {
  try {
    parseManifest(typeof content === "string" ? Buffer.from(content) : bytes(content), contentType);
  } catch (thrown) {
    // As the registry answers it: the parser throws a registry error that toOciError maps.
    const err = toOciError(thrown);
    assert.ok(err instanceof OciError, String(thrown));
    assert.equal(err.code, "MANIFEST_INVALID");
    return err.message;
  }
  assert.fail("accepted an invalid manifest");
}

describe("parseManifest", () => {
  it("reads an image manifest: references skip foreign layers; artifactType falls back to the config type", () => {
    const parsed = parseManifest(
      bytes({ ...image(), subject: desc(9, OCI_MANIFEST), annotations: { a: "b" } }),
      OCI_MANIFEST,
    );
    assert.equal(parsed.kind, "manifest");
    assert.deepEqual(parsed.references, [
      { digest: d(1), kind: "blob" },
      { digest: d(2), kind: "blob" },
    ]);
    assert.equal(parsed.artifactType, "application/vnd.oci.image.config.v1+json");
    assert.equal(parsed.subject?.digest, d(9));
    assert.deepEqual(parsed.annotations, { a: "b" });
    assert.equal(parseManifest(bytes(image({ artifactType: "x/y" })), OCI_MANIFEST).artifactType, "x/y");
  });

  it("reads indexes (OCI and Docker) with platforms", () => {
    const index = {
      schemaVersion: 2,
      manifests: [desc(4, OCI_MANIFEST, { platform: { architecture: "arm64", os: "linux", variant: "v8" } })],
    };
    for (const type of [OCI_INDEX, DOCKER_MANIFEST_LIST]) {
      const parsed = parseManifest(bytes({ ...index, mediaType: type }), type);
      assert.equal(parsed.kind, "index");
      assert.deepEqual(parsed.references, [{ digest: d(4), kind: "manifest" }]);
      assert.deepEqual(parsed.manifests[0]?.platform, { architecture: "arm64", os: "linux", variant: "v8" });
    }
  });

  it("takes the kind from the body when the Content-Type is generic", () => {
    assert.equal(
      parseManifest(bytes({ ...image(), mediaType: DOCKER_MANIFEST }), "application/json").mediaType,
      DOCKER_MANIFEST,
    );
    assert.equal(parseManifest(bytes({ schemaVersion: 2, manifests: [] }), undefined).mediaType, OCI_INDEX);
    assert.equal(parseManifest(bytes(image()), "").mediaType, OCI_MANIFEST);
  });

  it("refuses malformed manifests naming the problem", () => {
    assert.match(invalid("{"), /not valid JSON/);
    assert.match(invalid([1]), /JSON object/);
    assert.match(invalid(image({ schemaVersion: 1 })), /schemaVersion/);
    assert.match(invalid(image(), "application/vnd.unknown+json"), /unsupported manifest media type/);
    assert.match(invalid(image({ mediaType: OCI_INDEX }), OCI_MANIFEST), /does not match Content-Type/);
    assert.match(invalid({ schemaVersion: 2, layers: [] }, OCI_MANIFEST), /config/);
    assert.match(invalid({ schemaVersion: 2, config: desc(1) }, OCI_MANIFEST), /layers/);
    assert.match(invalid({ schemaVersion: 2 }, OCI_INDEX), /manifests array/);
    assert.match(
      invalid(image({ layers: [{ mediaType: "x", digest: "sha256:12", size: 1 }] }), OCI_MANIFEST),
      /layers\[0\]\.digest/,
    );
    assert.match(
      invalid(image({ layers: [{ mediaType: "x", digest: d(1), size: -1 }] }), OCI_MANIFEST),
      /layers\[0\]\.size/,
    );
    assert.match(
      invalid(image({ layers: [{ digest: d(1), size: 1 }] }), OCI_MANIFEST),
      /mediaType is required/,
    );
    assert.match(invalid(image({ annotations: { a: 1 } }), OCI_MANIFEST), /annotations\.a must be a string/);
  });
});
