import type { Store } from "../storage/store.js";

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
  async function publicDigests(repoUid: string): Promise<Set<string>> {
    const digests = new Set<string>();
    for (const tagName of PUBLIC_TAGS) {
      for (const row of await store.tags.history({ repoUid, tagName, limit: 100_000 })) {
        if (row.digest !== "") digests.add(row.digest);
      }
    }
    return digests;
  }

  async function manifestDigestIsPublic(
    repoUid: string,
    digest: string,
    known?: Set<string>,
  ): Promise<boolean> {
    const digests = known ?? (await publicDigests(repoUid));
    if (digests.has(digest)) return true;
    const parents = await store.manifests.referencedBy(repoUid, digest);
    return parents.some((parent) => digests.has(parent));
  }

  return {
    async manifest(repoUid, reference) {
      if (!reference.includes(":")) return PUBLIC_TAGS.includes(reference);
      return manifestDigestIsPublic(repoUid, reference);
    },
    async blob(repoUid, digest) {
      const digests = await publicDigests(repoUid);
      for (const manifest of await store.manifests.referencedBy(repoUid, digest)) {
        if (await manifestDigestIsPublic(repoUid, manifest, digests)) return true;
      }
      return false;
    },
  };
}
