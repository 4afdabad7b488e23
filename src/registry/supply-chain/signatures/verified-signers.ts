import { create } from "@bufbuild/protobuf";
import { type Tag, VerifiedSignerSchema } from "../../../gen/platform/registry/v2/tags_pb.js";
import type { SignatureVerifier } from "../supply-chain.js";
import { signersOf } from "./signature-verifier.js";

/**
 * `tags` with `verifiedSigners` filled: the distinct keys whose signatures of each tag's digest
 * verify. One verifier lookup per distinct (repo, digest) (none at all in a repo that trusts no
 * key), served from its cache on repeats; the
 * tags are changed in place and returned.
 */
export async function withVerifiedSigners(
  verifier: SignatureVerifier | undefined,
  tags: Tag[],
): Promise<Tag[]> {
  if (!verifier) return tags;
  const byImage = new Map<string, Promise<Tag["verifiedSigners"]>>();
  const signersOfImage = (repoUid: string, digest: string) => {
    const key = `${repoUid}\n${digest}`;
    let found = byImage.get(key);
    if (!found) {
      const repo = { uid: repoUid, name: "" };
      const signers =
        verifier.verifiedSigners?.(repo, digest) ?? verifier.signatures(repo, digest).then(signersOf);
      found = signers.then((list) => list.map((s) => create(VerifiedSignerSchema, s)));
      byImage.set(key, found);
    }
    return found;
  };
  await Promise.all(
    tags.map(async (tag) => {
      tag.verifiedSigners = await signersOfImage(repoOfTag(tag.uid), tag.digest);
    }),
  );
  return tags;
}

/** The repo uid of tag uid `<repo uid>/<16 hex>`. */
function repoOfTag(uid: string): string {
  return uid.slice(0, uid.lastIndexOf("/"));
}
