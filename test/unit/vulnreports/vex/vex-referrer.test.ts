import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Descriptor, ParsedManifest } from "../../../../src/registry/manifest-parser.js";
import { vulnReportLayer } from "../../../../src/vulnreports/referrer-ingest.js";
import { vexLayer } from "../../../../src/vulnreports/vex/vex-referrer.js";

const digest = (c: string) => `sha256:${c.repeat(64)}`;
const layer = (mediaType: string, annotations?: Record<string, string>): Descriptor =>
  ({ mediaType, digest: digest("b"), size: 10, ...(annotations ? { annotations } : {}) }) as Descriptor;
const manifest = (extra: Partial<ParsedManifest>): ParsedManifest => ({
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  kind: "manifest",
  references: [],
  layers: [],
  manifests: [],
  subject: {
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    digest: digest("a"),
    size: 100,
  } as Descriptor,
  ...extra,
});

describe("VEX referrers", () => {
  it("finds the OpenVEX layer of an openvex artifact, a layer of that type, and cosign openvex attestations", () => {
    const vex = layer("application/vnd.openvex+json");
    assert.equal(vexLayer(manifest({ artifactType: "application/vnd.openvex+json", layers: [vex] })), vex);
    assert.equal(vexLayer(manifest({ layers: [layer("text/plain"), vex] })), vex);
    const dsse = layer("application/vnd.dsse.envelope.v1+json", { predicateType: "https://openvex.dev/ns" });
    assert.equal(vexLayer(manifest({ layers: [dsse] })), dsse);
    const bundle = layer("application/vnd.dev.sigstore.bundle.v0.3+json");
    const bundled = manifest({
      artifactType: "application/vnd.dev.sigstore.bundle.v0.3+json",
      annotations: { "dev.sigstore.bundle.predicateType": "https://openvex.dev/ns/v0.2.0" },
      layers: [bundle],
    });
    assert.equal(vexLayer(bundled), bundle);
    assert.equal(vulnReportLayer(bundled), undefined, "not mistaken for a vulnerability report");
  });

  it("leaves other referrers alone", () => {
    const vuln = layer("application/vnd.dsse.envelope.v1+json", {
      predicateType: "https://cosign.sigstore.dev/attestation/vuln/v1",
    });
    assert.equal(vexLayer(manifest({ layers: [vuln] })), undefined);
    assert.equal(vexLayer(manifest({ layers: [layer("application/vnd.dsse.envelope.v1+json")] })), undefined);
    const { subject: _, ...noSubject } = manifest({
      artifactType: "application/vnd.openvex+json",
      layers: [layer("application/vnd.openvex+json")],
    });
    assert.equal(vexLayer(noSubject as ParsedManifest), undefined, "not a referrer");
  });
});
