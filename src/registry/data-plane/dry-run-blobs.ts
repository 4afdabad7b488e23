import type { BlobDriver, BlobListEntry } from "../../storage/blobs/blob-driver.js";

/**
 * `blobs` as a garbage collection dry run sees it: `delete` removes nothing and only remembers the
 * key, and from then on `stat` and `list` act as if the object were gone (so a later phase does not
 * count it a second time, as a stray). Every other operation is `blobs`' own.
 */
export function dryRunBlobs(blobs: BlobDriver): BlobDriver {
  const deleted = new Set<string>();
  return {
    kind: blobs.kind,
    stat: async (key) => (deleted.has(key) ? undefined : blobs.stat(key)),
    read: (key, range, expect) => blobs.read(key, range, expect),
    pipeTo: (key, sink, range, expect) => blobs.pipeTo(key, sink, range, expect),
    put: (key, source) => blobs.put(key, source),
    append: (key, source) => blobs.append(key, source),
    commit: (from, to) => blobs.commit(from, to),
    delete: async (key) => {
      deleted.add(key);
    },
    async *list(prefix): AsyncIterable<BlobListEntry> {
      for await (const entry of blobs.list(prefix)) if (!deleted.has(entry.key)) yield entry;
    },
    close: () => blobs.close(),
  };
}
