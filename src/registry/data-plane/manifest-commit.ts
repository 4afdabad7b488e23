import { newChildUid } from "../../core/uidp.js";
import type { RepoRow } from "../../storage/registry-store.js";
import type { Store } from "../../storage/store.js";
import { MissingReferenceError } from "../content-errors.js";
import { denyImmutableRegistryTag } from "../immutability/tag-guard.js";
import { EMPTY_BLOB_DIGEST, type ParsedManifest } from "../manifest-parser.js";
import { admitManifest, type QuotaEventSink } from "../quotas/storage-quota.js";
import { withRegistryLock } from "./registry-lock.js";

/**
 * Stores a validated manifest in `repo` and, with `tag`, points the tag at it (keeping its
 * `deprecated` flag), in one transaction under the shared registry lock: every referenced blob must
 * be linked to the repo (the OCI empty blob needs no upload) and every child manifest stored there,
 * else MissingReferenceError and nothing is written (with `references: "cached"`, a pull-through
 * cache's manifest, blobs are fetched when first pulled: only child manifests are checked); a push past the organization's storage quota
 * is QuotaExceededError and nothing is written. The tag write appends the history row when the tag
 * moves; moving a tag an immutability rule protects is ImmutableTagError (checked with the tag's row
 * locked).
 */
export async function commitManifest(
  store: Store,
  args: {
    repo: RepoRow;
    name: string;
    digest: string;
    content: Uint8Array;
    parsed: ParsedManifest;
    tag?: string;
    now: number;
    /** Writes the push event in the same transaction; told what the tag named before (if anything). */
    recordPush?: (tx: Store, tagPreviousDigest: string | undefined) => Promise<void>;
    /** Records quota events (the 80 % warning here; the caller records a refusal). */
    onQuota?: QuotaEventSink;
    /**
     * `required` (default, a push): every referenced blob must be linked. `cached` (the pull-through
     * cache, ADR 0052): blobs are not checked, since they are fetched from the upstream when first
     * pulled; child manifests still must be stored.
     */
    references?: "required" | "cached";
  },
): Promise<void> {
  const { repo, name, digest, content, parsed, now } = args;
  await store.transaction(async (tx) => {
    await withRegistryLock(tx, "shared");
    const blobsChecked = args.references !== "cached";
    for (const reference of parsed.references) {
      if (reference.kind === "blob" && !blobsChecked) continue;
      const present =
        reference.kind === "manifest"
          ? await tx.manifests.has(repo.uid, reference.digest)
          : reference.digest === EMPTY_BLOB_DIGEST ||
            (await tx.blobs.getLinked(repo.uid, reference.digest)) !== undefined;
      if (!present) {
        throw new MissingReferenceError(
          `${reference.kind} ${reference.digest} referenced by the manifest is not in ${name}`,
          reference.kind === "manifest" ? "manifest" : "blob",
          reference.digest,
        );
      }
    }
    await admitManifest(tx, {
      ...{ repoUid: repo.uid, repository: name, digest, size: content.byteLength },
      ...{ references: parsed.references, notify: args.onQuota },
    });
    await tx.manifests.put(
      {
        repoUid: repo.uid,
        digest,
        mediaType: parsed.mediaType,
        content,
        ...(parsed.subject ? { subjectDigest: parsed.subject.digest } : {}),
        ...(parsed.artifactType ? { artifactType: parsed.artifactType } : {}),
        ...(parsed.annotations ? { annotations: parsed.annotations } : {}),
        createTime: now,
      },
      parsed.references,
    );
    let previous: string | undefined;
    if (args.tag !== undefined) {
      const current = await tx.tags.getByName(repo.uid, args.tag);
      previous = current?.digest;
      await tx.tags.put({
        repoUid: repo.uid,
        name: args.tag,
        digest,
        deprecated: current?.deprecated ?? false,
        newUid: newChildUid(repo.uid),
        now,
        // Rules are read only when the tag would move, so pushes of new tags and of the same
        // digest pay nothing. Referrers go by digest or under their fallback tags, which no rule
        // protects (ADR 0045); a `subject` does not let a manifest take a protected tag.
        beforeMove: (tag) => denyImmutableRegistryTag(tx, tag, name),
      });
    }
    await args.recordPush?.(tx, previous);
  });
}
