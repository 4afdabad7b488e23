import { Writable } from "node:stream";
import type { RegistryContent } from "../../data-plane/registry-content.js";
import { parseDigest } from "../../digest.js";

/** What reading a small blob needs of the registry's content. */
export type BlobReader = Pick<RegistryContent, "linkedBlob" | "pipeBlob">;

/** The outcome of a bounded read: the bytes, or why there are none. */
export type BoundedRead = { bytes: Buffer } | { error: string };

/**
 * The bytes of blob `digest` as the repo links it, when it is at most `maxBytes` long (the size
 * is known before reading, so an oversized blob is never read). Never throws.
 */
export async function readSmallBlob(
  content: BlobReader,
  repoUid: string,
  digest: string,
  maxBytes: number,
): Promise<BoundedRead> {
  try {
    const linked = await content.linkedBlob(repoUid, digest);
    if (!linked) return { error: `blob ${digest.slice(0, 80)} is not in the repo` };
    if (linked.size > maxBytes) return { error: `larger than ${maxBytes / 1024} KiB (${linked.size} bytes)` };
    const chunks: Buffer[] = [];
    let total = 0;
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        total += chunk.length;
        if (total > maxBytes) return done(new Error("blob grew past its recorded size"));
        chunks.push(chunk);
        done();
      },
    });
    await content.pipeBlob(parseDigest(digest), sink, undefined, linked.size);
    return { bytes: Buffer.concat(chunks) };
  } catch (err) {
    return { error: `unreadable: ${(err instanceof Error ? err.message : String(err)).slice(0, 200)}` };
  }
}
