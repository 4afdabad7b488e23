import { addAbortSignal } from "node:stream";
import { notFound } from "../core/errors.js";
import type { BlobDriver } from "../storage/blobs/blob-driver.js";
import { blobKey } from "../storage/blobs/blob-layout.js";
import type { Store } from "../storage/store.js";
import { parseDigest } from "./digest.js";
import { type Descriptor, type ParsedManifest, parseManifest } from "./manifest-parser.js";

/** One platform of a stored image: its architecture and its size (config + layers, bytes). */
export interface ImagePlatform {
  architecture: string;
  os: string;
  variant?: string;
  manifestDigest: string;
  size: number;
}

/** Image configs larger than this are not read (real ones are a few KiB). */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * The platforms of manifest `digest` in `repoUid`, derived from stored manifests: an index lists
 * the platforms of its entries (entries without a real platform, such as `unknown/unknown`
 * attestation manifests, are skipped); a single manifest is one platform whose architecture is read
 * from its config blob. NOT_FOUND when the repo or the manifest is missing. Once `signal` fires it
 * rejects with its reason: checked before each store read, and the config blob's read stream is
 * destroyed.
 */
export async function describeImage(
  deps: { store: Pick<Store, "repos" | "manifests">; blobs: BlobDriver },
  repoUid: string,
  digest: string,
  signal: AbortSignal,
): Promise<ImagePlatform[]> {
  const { store } = deps;
  signal.throwIfAborted();
  if (!(await store.repos.get(repoUid))) throw notFound("repo", repoUid);
  signal.throwIfAborted();
  const manifest = await store.manifests.get(repoUid, digest);
  if (!manifest) throw notFound("manifest", `${repoUid}@${digest}`);
  const parsed = parseManifest(manifest.content, manifest.mediaType);
  if (parsed.kind === "manifest") return [await singlePlatform(deps, digest, parsed, signal)];
  const platforms: ImagePlatform[] = [];
  for (const entry of parsed.manifests) {
    if (!entry.platform || entry.platform.architecture === "unknown") continue;
    signal.throwIfAborted();
    const child = await store.manifests.get(repoUid, entry.digest);
    const childParsed = child && parseManifest(child.content, child.mediaType);
    platforms.push({
      architecture: entry.platform.architecture,
      os: entry.platform.os,
      ...(entry.platform.variant ? { variant: entry.platform.variant } : {}),
      manifestDigest: entry.digest,
      size: childParsed?.kind === "manifest" ? sizeOf(childParsed) : 0,
    });
  }
  return platforms;
}

function sizeOf(parsed: ParsedManifest): number {
  return (parsed.config?.size ?? 0) + parsed.layers.reduce((sum, layer: Descriptor) => sum + layer.size, 0);
}

async function singlePlatform(
  deps: { blobs: BlobDriver },
  digest: string,
  parsed: ParsedManifest,
  signal: AbortSignal,
): Promise<ImagePlatform> {
  const config = parsed.config;
  let platform = { architecture: "", os: "" } as { architecture: string; os: string; variant?: string };
  if (config && config.size <= MAX_CONFIG_BYTES) {
    try {
      const chunks: Buffer[] = [];
      const bytes = await deps.blobs.read(blobKey(parseDigest(config.digest)));
      // The driver takes no signal: the stream it gave is destroyed (its file or connection freed).
      for await (const chunk of addAbortSignal(signal, bytes)) chunks.push(chunk as Buffer);
      const doc = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      platform = {
        architecture: typeof doc.architecture === "string" ? doc.architecture : "",
        os: typeof doc.os === "string" ? doc.os : "",
        ...(typeof doc.variant === "string" ? { variant: doc.variant } : {}),
      };
    } catch {
      // Not an image config (an artifact): no platform to report. Unless the call was given up.
      signal.throwIfAborted();
    }
  }
  return { ...platform, manifestDigest: digest, size: sizeOf(parsed) };
}
