/**
 * Images for replication tests, built in memory: a multi-arch index over built images, and a
 * cosign-like signature artifact whose `subject` names an image (OCI 1.1 referrer).
 */
import { type BuiltImage, buildImage, OCI_MANIFEST, sha256 } from "./registry-push.js";

/** Media type of an OCI image index. */
export const OCI_INDEX = "application/vnd.oci.image.index.v1+json";
/** Artifact type of a cosign signature stored as an OCI 1.1 referrer. */
export const COSIGN_SIGNATURE = "application/vnd.dev.cosign.artifact.sig.v1+json";
const EMPTY_CONFIG = "application/vnd.oci.empty.v1+json";
const EMPTY = Buffer.from("{}");

/** A manifest (image, index or artifact) with every blob it needs and the child images it names. */
export interface BuiltManifest {
  digest: string;
  mediaType: string;
  manifest: Buffer;
  /** digest → bytes of every blob (children's included). */
  blobs: Map<string, Buffer>;
  /** Child manifests to store before this one (an index's platforms). */
  children: BuiltManifest[];
}

/** A built image as a BuiltManifest. */
export function asManifest(image: BuiltImage): BuiltManifest {
  return {
    digest: image.digest,
    mediaType: OCI_MANIFEST,
    manifest: image.manifest,
    blobs: image.blobs,
    children: [],
  };
}

/** An index of one image per platform of `platforms` (`linux/amd64`…), each built from `<seed>-<platform>`. */
export function buildIndex(seed: string, platforms: string[], sharedLayer?: string): BuiltManifest {
  const children = platforms.map((p) =>
    asManifest(
      buildImage(`${seed}-${p}`, [...(sharedLayer ? [sharedLayer] : []), `layer of ${seed} for ${p}`]),
    ),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_INDEX,
      manifests: children.map((c, i) => {
        const [os, architecture] = (platforms[i] as string).split("/");
        return {
          mediaType: OCI_MANIFEST,
          digest: c.digest,
          size: c.manifest.length,
          platform: { os, architecture },
        };
      }),
    }),
  );
  const blobs = new Map<string, Buffer>();
  for (const c of children) for (const [d, b] of c.blobs) blobs.set(d, b);
  return { digest: sha256(manifest), mediaType: OCI_INDEX, manifest, blobs, children };
}

/**
 * A cosign-like signature of `subject`: an OCI manifest with artifactType COSIGN_SIGNATURE, the
 * empty config, one simple-signing layer naming the subject's digest, and `subject` set.
 */
export function buildSignature(
  subject: Pick<BuiltManifest, "digest" | "mediaType" | "manifest">,
  who = "test",
): BuiltManifest {
  const payload = Buffer.from(
    JSON.stringify({
      critical: {
        identity: { "docker-reference": "example" },
        image: { "docker-manifest-digest": subject.digest },
        type: "cosign container image signature",
      },
      optional: { who },
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      artifactType: COSIGN_SIGNATURE,
      config: { mediaType: EMPTY_CONFIG, digest: sha256(EMPTY), size: EMPTY.length },
      layers: [
        {
          mediaType: "application/vnd.dev.cosign.simplesigning.v1+json",
          digest: sha256(payload),
          size: payload.length,
          annotations: {
            "dev.cosignproject.cosign/signature": Buffer.from(`sig by ${who}`).toString("base64"),
          },
        },
      ],
      subject: { mediaType: subject.mediaType, digest: subject.digest, size: subject.manifest.length },
    }),
  );
  return {
    digest: sha256(manifest),
    mediaType: OCI_MANIFEST,
    manifest,
    blobs: new Map([
      [sha256(EMPTY), EMPTY],
      [sha256(payload), payload],
    ]),
    children: [],
  };
}

/** Total bytes of the distinct blobs of `manifests`. */
export function blobBytes(...manifests: BuiltManifest[]): number {
  const all = new Map<string, number>();
  for (const m of manifests) for (const [d, b] of m.blobs) all.set(d, b.length);
  return [...all.values()].reduce((a, b) => a + b, 0);
}
