import type { Store } from "../../storage/store.js";

/** The tags of the public namespace anyone may pull (and whose history anyone may read). */
export const PUBLIC_TAGS: readonly string[] = ["latest", "latest-dev"];

/** Decides which objects of a public-namespace repo an anonymous (or unbound) caller may read. */
export interface PublicContent {
  /** A tag in PUBLIC_TAGS, or a manifest digest such a tag points or pointed to (or a child of one). */
  manifest(repoUid: string, reference: string): Promise<boolean>;
  /** A blob referenced by a public manifest of the repo. */
  blob(repoUid: string, digest: string): Promise<boolean>;
}

/**
 * Creates the rules. Older builds stay pullable by digest once a public tag has pointed at them:
 * that is what the Tag History API is for (pinning).
 */
export function createPublicContent(store: Store): PublicContent {
  async function manifestDigestIsPublic(repoUid: string, digest: string): Promise<boolean> {
    if (await store.tags.pointedTo(repoUid, PUBLIC_TAGS, digest)) return true;
    for (const parent of await store.manifests.referencedBy(repoUid, digest)) {
      if (await store.tags.pointedTo(repoUid, PUBLIC_TAGS, parent)) return true;
    }
    return false;
  }

  return {
    async manifest(repoUid, reference) {
      if (!reference.includes(":")) return PUBLIC_TAGS.includes(reference);
      return manifestDigestIsPublic(repoUid, reference);
    },
    async blob(repoUid, digest) {
      for (const manifest of await store.manifests.referencedBy(repoUid, digest)) {
        if (await manifestDigestIsPublic(repoUid, manifest)) return true;
      }
      return false;
    },
  };
}
