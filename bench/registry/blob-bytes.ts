// Removing a pushed blob's bytes between benchmark pushes, so that every push really writes.
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";

/** Removes the stored bytes of blob `hex` (any entry named so under a `blobs` folder); how many. */
export async function removeBlobBytes(dir: string, hex: string): Promise<number> {
  let removed = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    const parent = entry.parentPath ?? (entry as unknown as { path: string }).path;
    if (entry.name === hex && parent.split("/").includes("blobs")) {
      await rm(join(parent, entry.name), { recursive: true, force: true });
      removed++;
    }
  }
  return removed;
}
