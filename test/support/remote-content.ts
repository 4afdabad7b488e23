import { createHash, randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import type { RemoteRegistry } from "../../src/registry/remote/remote-registry.js";

/** A blob and its digest. */
export interface TestBlob {
  digest: string;
  bytes: Buffer;
}

/** `sha256:<hex>` of `bytes`. */
export function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** A blob of `size` random bytes (or of `text`). */
export function blob(content: number | string): TestBlob {
  const bytes = typeof content === "number" ? randomBytes(content) : Buffer.from(content);
  return { digest: sha256(bytes), bytes };
}

/** A small OCI image: config + layers, and its manifest bytes. */
export interface TestImage {
  config: TestBlob;
  layers: TestBlob[];
  manifest: Buffer;
  digest: string;
  mediaType: string;
}

const OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json";
export const OCI_INDEX = "application/vnd.oci.image.index.v1+json";

/** An OCI image manifest over a fresh config and `layerSizes` random layers (optionally with a subject). */
export function image(
  layerSizes: number[] = [1024],
  extra: { subject?: { digest: string; size: number; mediaType: string }; artifactType?: string } = {},
): TestImage {
  const config = blob(
    JSON.stringify({ architecture: "amd64", os: "linux", nonce: randomBytes(8).toString("hex") }),
  );
  const layers = layerSizes.map((size) => blob(size));
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      ...(extra.artifactType ? { artifactType: extra.artifactType } : {}),
      config: {
        mediaType: "application/vnd.oci.image.config.v1+json",
        digest: config.digest,
        size: config.bytes.length,
      },
      layers: layers.map((l) => ({
        mediaType: "application/vnd.oci.image.layer.v1.tar+gzip",
        digest: l.digest,
        size: l.bytes.length,
      })),
      ...(extra.subject ? { subject: extra.subject } : {}),
    }),
  );
  return { config, layers, manifest, digest: sha256(manifest), mediaType: OCI_MANIFEST };
}

/** An OCI index over `children`. */
export function index(children: TestImage[]): { content: Buffer; digest: string; mediaType: string } {
  const content = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_INDEX,
      manifests: children.map((c, i) => ({
        mediaType: c.mediaType,
        digest: c.digest,
        size: c.manifest.length,
        platform: { architecture: i === 0 ? "amd64" : "arm64", os: "linux" },
      })),
    }),
  );
  return { content, digest: sha256(content), mediaType: OCI_INDEX };
}

/** Pushes `img`'s blobs (those the remote lacks) and its manifest under `tag` through `remote`. */
export async function pushImage(
  remote: RemoteRegistry,
  repo: string,
  img: TestImage,
  tag?: string,
): Promise<string> {
  for (const b of [img.config, ...img.layers]) {
    if (!(await remote.hasBlob(repo, b.digest))) {
      await remote.pushBlob(repo, b.digest, b.bytes.length, Readable.from([b.bytes]));
    }
  }
  return remote.putManifest(repo, tag ?? img.digest, img.mediaType, img.manifest);
}

/** Everything `body` yields. */
export async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Every item of an async iterable. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
