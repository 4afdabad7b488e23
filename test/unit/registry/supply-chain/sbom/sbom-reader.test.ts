import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { Readable } from "node:stream";
import { describe, it } from "node:test";
import { parseManifest } from "../../../../../src/registry/manifest-parser.js";
import { SbomFormatError } from "../../../../../src/registry/supply-chain/sbom/sbom-errors.js";
import { createSbomReader } from "../../../../../src/registry/supply-chain/sbom/sbom-reader.js";
import { buildxAttestationsOf } from "../../../../../src/registry/supply-chain/sbom/sbom-recognition.js";
import type { ManifestRow, ReferrerRow, TagRow } from "../../../../../src/storage/registry-store.js";

const FIXTURES = new URL("../../../../fixtures/sbom/", import.meta.url);
const REPO = "repo-uid";
const IMAGE = `sha256:${"a".repeat(64)}`;
const digestOf = (bytes: Uint8Array) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** An in-memory store and blob store holding SBOM manifests, counting blob reads. */
function world() {
  const manifests = new Map<string, ManifestRow>();
  const referrers: string[] = [];
  const blobs = new Map<string, Buffer>();
  let blobReads = 0;
  let release: (() => void) | undefined;
  const store = {
    manifests: {
      get: async (_repo: string, digest: string) => manifests.get(digest),
      referrers: async (): Promise<ReferrerRow[]> =>
        referrers.map((digest) => ({
          digest,
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          size: 1,
        })),
      referencedBy: async () => [],
    },
    tags: { getByName: async (): Promise<TagRow | undefined> => undefined },
  };
  const reader = (limits = {}) =>
    createSbomReader({
      store: store as never,
      blobs: {
        async read(key: string) {
          blobReads++;
          if (release) await new Promise<void>((resolve) => (release = resolve));
          const bytes = blobs.get(key.split("/").at(-1) as string);
          if (!bytes) throw new Error(`no blob ${key}`);
          return Readable.from([bytes]);
        },
      },
      limits,
    });
  function attach(document: Buffer, createTime: number, layerMediaType = "application/spdx+json"): string {
    const layer = digestOf(document);
    blobs.set(layer.slice("sha256:".length), document);
    const content = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: "application/vnd.oci.image.manifest.v1+json",
        config: {
          mediaType: "application/vnd.oci.empty.v1+json",
          digest: `sha256:${"4".repeat(64)}`,
          size: 2,
        },
        layers: [{ mediaType: layerMediaType, digest: layer, size: document.length }],
        subject: { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: IMAGE, size: 2 },
      }),
    );
    const digest = digestOf(content);
    manifests.set(digest, {
      repoUid: REPO,
      digest,
      mediaType: "application/vnd.oci.image.manifest.v1+json",
      content,
      subjectDigest: IMAGE,
      createTime,
    });
    referrers.push(digest);
    return digest;
  }
  return {
    reader,
    attach,
    reads: () => blobReads,
    hold: () => {
      release = () => {};
      return () => release?.();
    },
  };
}

describe("createSbomReader", () => {
  it("parses once per referrer: later calls and concurrent ones share the result", async () => {
    const w = world();
    const referrer = w.attach(readFileSync(new URL("spdx-2.3.json", FIXTURES)), 1);
    const reader = w.reader();
    const releaseRead = w.hold();
    const [a, b] = [reader.sbom(REPO, IMAGE), reader.sbom(REPO, IMAGE)];
    // Both wait on one blob read.
    await new Promise((resolve) => setImmediate(resolve));
    releaseRead();
    const [first, second] = await Promise.all([a, b]);
    assert.equal(first?.referrer, referrer);
    assert.equal(first, second);
    assert.equal(w.reads(), 1);
    assert.equal((await reader.sbom(REPO, IMAGE))?.packages.length, 5);
    assert.equal(w.reads(), 1, "cached");
  });

  it("answers the newest SBOM by push time, and hasSbom without reading any blob", async () => {
    const w = world();
    w.attach(readFileSync(new URL("spdx-2.3.json", FIXTURES)), 1);
    const newer = w.attach(
      readFileSync(new URL("cyclonedx-1.5.json", FIXTURES)),
      2,
      "application/vnd.cyclonedx+json",
    );
    const reader = w.reader();
    assert.equal(await reader.hasSbom(REPO, IMAGE), true);
    assert.equal(
      await reader.hasSbom(REPO, `sha256:${"b".repeat(64)}`),
      true,
      "the fake lists the same referrers",
    );
    assert.equal(w.reads(), 0);
    const sbom = await reader.sbom(REPO, IMAGE);
    assert.equal(sbom?.referrer, newer);
    assert.equal(sbom?.format, "CycloneDX-1.5");
  });

  it("refuses an SBOM whose layer is over the byte limit before reading it, naming the referrer", async () => {
    const w = world();
    const referrer = w.attach(readFileSync(new URL("spdx-2.3.json", FIXTURES)), 1);
    await assert.rejects(
      w.reader({ maxBytes: 100 }).sbom(REPO, IMAGE),
      (err: unknown) =>
        err instanceof SbomFormatError &&
        err.message.startsWith(`the SBOM of referrer ${referrer} is `) &&
        /larger than the limit of 100 bytes/.test(err.message),
    );
    assert.equal(w.reads(), 0);
  });

  it("does not cache a failed parse: the next call reads again", async () => {
    const w = world();
    w.attach(Buffer.from("{not json"), 1);
    const reader = w.reader();
    await assert.rejects(reader.sbom(REPO, IMAGE), /not valid JSON/);
    await assert.rejects(reader.sbom(REPO, IMAGE), /not valid JSON/);
    assert.equal(w.reads(), 2);
  });
});

describe("buildxAttestationsOf", () => {
  it("maps each image of an index to its attestation manifests", () => {
    const image = `sha256:${"1".repeat(64)}`;
    const attestation = `sha256:${"2".repeat(64)}`;
    const index = parseManifest(
      Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: "application/vnd.oci.image.index.v1+json",
          manifests: [
            { mediaType: "application/vnd.oci.image.manifest.v1+json", digest: image, size: 1 },
            {
              mediaType: "application/vnd.oci.image.manifest.v1+json",
              digest: attestation,
              size: 1,
              annotations: {
                "vnd.docker.reference.digest": image,
                "vnd.docker.reference.type": "attestation-manifest",
              },
            },
            {
              mediaType: "application/vnd.oci.image.manifest.v1+json",
              digest: `sha256:${"3".repeat(64)}`,
              size: 1,
              annotations: {
                "vnd.docker.reference.digest": image,
                "vnd.docker.reference.type": "something-else",
              },
            },
          ],
        }),
      ),
      "application/vnd.oci.image.index.v1+json",
    );
    assert.deepEqual([...buildxAttestationsOf(index)], [[image, [attestation]]]);
  });
});
