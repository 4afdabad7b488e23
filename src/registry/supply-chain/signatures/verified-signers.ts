import { create } from "@bufbuild/protobuf";
import { type Tag, VerifiedSignerSchema } from "../../../gen/platform/registry/v2/tags_pb.js";
import type { SignatureVerifier } from "../supply-chain.js";

/**
 * `tags` with `verifiedSigners` filled: the distinct keys whose signatures of each tag's digest
 * verify. One verifier lookup per distinct (repo, digest), served from its cache on repeats; the
 * tags are changed in place and returned.
 */
export async function withVerifiedSigners(
  verifier: SignatureVerifier | undefined,
  tags: Tag[],
): Promise<Tag[]> {
  if (!verifier) return tags;
  const byImage = new Map<string, Promise<Tag["verifiedSigners"]>>();
  const signersOf = (repoUid: string, digest: string) => {
    const key = `${repoUid}\n${digest}`;
    let found = byImage.get(key);
    if (!found) {
      found = verifier.signatures({ uid: repoUid, name: "" }, digest).then((checks) => {
        const seen = new Map<string, string>();
        for (const c of checks) if (c.verified && !seen.has(c.keyUid)) seen.set(c.keyUid, c.keyName);
        return [...seen].map(([keyUid, keyName]) => create(VerifiedSignerSchema, { keyUid, keyName }));
      });
      byImage.set(key, found);
    }
    return found;
  };
  await Promise.all(
    tags.map(async (tag) => {
      tag.verifiedSigners = await signersOf(repoOfTag(tag.uid), tag.digest);
    }),
  );
  return tags;
}

/** The repo uid of tag uid `<repo uid>/<16 hex>`. */
function repoOfTag(uid: string): string {
  return uid.slice(0, uid.lastIndexOf("/"));
}
