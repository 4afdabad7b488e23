/**
 * An in-memory stand-in for the registry content the signature verifier reads: manifests put by
 * digest (referrers derived from their `subject`, artifact type from `artifactType` or the config
 * media type, as the registry does), tags, and blobs.
 */
import type { Writable } from "node:stream";
import type { Referrer } from "../../../../../src/registry/data-plane/registry-content.js";
import type { Digest } from "../../../../../src/registry/digest.js";
import type { SignatureContent } from "../../../../../src/registry/supply-chain/signatures/signature-verifier.js";
import { sha256 } from "../../../../support/registry-push.js";

export interface MemoryContent extends SignatureContent {
  putManifest(bytes: Buffer, blobs?: Buffer[], tag?: string): string;
  putBlob(bytes: Buffer): string;
  tags: Map<string, string>;
  blobs: Map<string, Buffer>;
  reads: number;
}

export function memoryContent(): MemoryContent {
  const manifests = new Map<string, Buffer>();
  const tags = new Map<string, string>();
  const blobs = new Map<string, Buffer>();
  const content: MemoryContent = {
    tags,
    blobs,
    reads: 0,
    putBlob(bytes) {
      blobs.set(sha256(bytes), bytes);
      return sha256(bytes);
    },
    putManifest(bytes, extra = [], tag) {
      for (const b of extra) content.putBlob(b);
      const digest = sha256(bytes);
      manifests.set(digest, bytes);
      if (tag !== undefined) tags.set(tag, digest);
      return digest;
    },
    async tagDigest(_repo, tag) {
      return tags.get(tag);
    },
    async manifest(_repo, digest) {
      content.reads++;
      const bytes = manifests.get(digest);
      return bytes && { digest, mediaType: "application/vnd.oci.image.manifest.v1+json", content: bytes };
    },
    async referrers(_repo, digest, artifactType) {
      const out: Referrer[] = [];
      for (const [d, bytes] of manifests) {
        const body = JSON.parse(bytes.toString()) as {
          subject?: { digest: string };
          artifactType?: string;
          config?: { mediaType: string };
        };
        if (body.subject?.digest !== digest) continue;
        const type = body.artifactType ?? body.config?.mediaType;
        if (artifactType !== undefined && type !== artifactType) continue;
        out.push({
          digest: d,
          mediaType: "application/vnd.oci.image.manifest.v1+json",
          size: bytes.length,
          artifactType: type,
        });
      }
      return out;
    },
    async linkedBlob(_repo, digest) {
      const b = blobs.get(digest);
      return b && { digest, size: b.length };
    },
    async pipeBlob(digest: Digest, sink: Writable) {
      const b = blobs.get(digest.value);
      if (!b) throw new Error("missing");
      await new Promise<void>((resolve, reject) => {
        sink.on("error", reject);
        sink.end(b, () => resolve());
      });
    },
  };
  return content;
}
