import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseManifest } from "../../../../../src/registry/manifest-parser.js";
import {
  cosignSbomTags,
  isSbomPredicate,
  sbomLayer,
} from "../../../../../src/registry/supply-chain/sbom/sbom-recognition.js";

const EMPTY = {
  mediaType: "application/vnd.oci.empty.v1+json",
  digest: "sha256:44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
  size: 2,
};
const SUBJECT = {
  mediaType: "application/vnd.oci.image.manifest.v1+json",
  digest: `sha256:${"a".repeat(64)}`,
  size: 100,
};

function layer(mediaType: string, annotations?: Record<string, string>, n = 1) {
  return {
    mediaType,
    digest: `sha256:${String(n).repeat(64)}`,
    size: 10,
    ...(annotations ? { annotations } : {}),
  };
}

function manifest(fields: {
  artifactType?: string;
  annotations?: Record<string, string>;
  layers: ReturnType<typeof layer>[];
  config?: typeof EMPTY;
}) {
  const doc = {
    schemaVersion: 2,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    ...(fields.artifactType ? { artifactType: fields.artifactType } : {}),
    config: fields.config ?? EMPTY,
    layers: fields.layers,
    subject: SUBJECT,
    ...(fields.annotations ? { annotations: fields.annotations } : {}),
  };
  return parseManifest(Buffer.from(JSON.stringify(doc)), doc.mediaType);
}

describe("sbomLayer", () => {
  it("recognises SPDX and CycloneDX JSON layers (cosign attach sbom, oras attach)", () => {
    for (const type of [
      "application/spdx+json",
      "text/spdx+json",
      "application/vnd.cyclonedx+json",
      "application/vnd.cyclonedx+json; version=1.6",
    ]) {
      assert.equal(sbomLayer(manifest({ layers: [layer(type)] }))?.mediaType, type, type);
    }
  });

  it("takes the first layer of a manifest whose artifactType is an SBOM type", () => {
    const m = manifest({
      artifactType: "application/spdx+json",
      layers: [layer("application/vnd.oci.image.layer.v1.tar", undefined, 2)],
    });
    assert.equal(sbomLayer(m)?.digest, `sha256:${"2".repeat(64)}`);
  });

  it("recognises attestations by their predicate-type annotation: layer, then manifest", () => {
    const dsse = "application/vnd.dsse.envelope.v1+json";
    // cosign's .att layout: the annotation sits on the layer.
    assert.ok(sbomLayer(manifest({ layers: [layer(dsse, { predicateType: "https://spdx.dev/Document" })] })));
    // docker buildx / oras: in-toto layers.
    assert.ok(
      sbomLayer(
        manifest({
          layers: [
            layer("application/vnd.in-toto+json", {
              "in-toto.io/predicate-type": "https://slsa.dev/provenance/v1",
            }),
            layer(
              "application/vnd.in-toto+json",
              { "in-toto.io/predicate-type": "https://cyclonedx.org/bom" },
              3,
            ),
          ],
        }),
      ),
    );
    // cosign v3: a Sigstore bundle referrer annotated at the manifest.
    const bundle = "application/vnd.dev.sigstore.bundle.v0.3+json";
    assert.ok(
      sbomLayer(
        manifest({
          artifactType: bundle,
          annotations: { "dev.sigstore.bundle.predicateType": "https://spdx.dev/Document" },
          layers: [layer(bundle)],
        }),
      ),
    );
    // An artifactType of DSSE with a manifest annotation covers untyped layers.
    assert.ok(
      sbomLayer(
        manifest({
          artifactType: dsse,
          annotations: { "in-toto.io/predicate-type": "https://cyclonedx.org/bom/v1.6" },
          layers: [layer("application/octet-stream")],
        }),
      ),
    );
  });

  it("does not recognise other attestations, unannotated ones, signatures or images", () => {
    const dsse = "application/vnd.dsse.envelope.v1+json";
    assert.equal(
      sbomLayer(manifest({ layers: [layer(dsse, { predicateType: "https://slsa.dev/provenance/v1" })] })),
      undefined,
    );
    assert.equal(sbomLayer(manifest({ layers: [layer(dsse)] })), undefined);
    assert.equal(sbomLayer(manifest({ layers: [layer("application/vnd.in-toto+json")] })), undefined);
    assert.equal(
      sbomLayer(
        manifest({
          layers: [
            layer("application/vnd.dev.cosign.simplesigning.v1+json", {
              "dev.cosignproject.cosign/signature": "MEUC",
            }),
          ],
        }),
      ),
      undefined,
    );
    assert.equal(
      sbomLayer(manifest({ layers: [layer("application/vnd.oci.image.layer.v1.tar+gzip")] })),
      undefined,
    );
    // A predicate annotation on an image layer does not make it an attestation.
    assert.equal(
      sbomLayer(
        manifest({
          layers: [
            layer("application/vnd.oci.image.layer.v1.tar", { predicateType: "https://spdx.dev/Document" }),
          ],
        }),
      ),
      undefined,
    );
  });

  it("matches SBOM predicates exactly or below a version path", () => {
    assert.ok(isSbomPredicate("https://spdx.dev/Document"));
    assert.ok(isSbomPredicate("https://spdx.dev/Document/v2.3"));
    assert.ok(isSbomPredicate("https://cyclonedx.org/bom/v1.5"));
    assert.ok(!isSbomPredicate("https://spdx.dev/Documents"));
    assert.ok(!isSbomPredicate("https://openvex.dev/ns/v0.2.0"));
  });

  it("names cosign's tags for a digest", () => {
    assert.deepEqual(cosignSbomTags(`sha256:${"b".repeat(64)}`), [
      `sha256-${"b".repeat(64)}.sbom`,
      `sha256-${"b".repeat(64)}.att`,
    ]);
  });
});
