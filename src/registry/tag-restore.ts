import { failedPrecondition, invalidArgument, notFound } from "../core/errors.js";
import type { TagRow } from "../storage/registry-store.js";
import type { Store } from "../storage/store.js";
import { withRegistryLock } from "./data-plane/registry-lock.js";
import { refuseImmutableTag } from "./immutability/tag-guard.js";
import { validateDigest } from "./names.js";

/** What a restore asks for: a digest from the tag's history, or the digest it had at a time (ms). */
export type RestoreTarget = { digest: string } | { time: number };

/**
 * The target of a RestoreTag request: exactly one of `digest` (valid) and `time`; INVALID_ARGUMENT
 * otherwise.
 */
export function restoreTarget(digest: string, time: number | undefined): RestoreTarget {
  if (digest !== "" && time !== undefined) {
    throw invalidArgument("digest", "give either digest or time, not both");
  }
  if (digest !== "") {
    validateDigest(digest);
    return { digest };
  }
  if (time === undefined) throw invalidArgument("digest", "give a digest or a time to restore to");
  return { time };
}

/** What a restore did: the tag as stored, and whether it moved or was created again. */
export interface RestoredTag {
  row: TagRow;
  change: "updated" | "created" | "none";
}

/**
 * Moves tag `uid` back to `target`, in `tx` (call it inside the transaction that records the
 * event). A deleted tag is found by the uid on its delete record and created again with that uid
 * (or, when a tag of the same name exists again, that tag moves). Under the shared registry lock,
 * so garbage collection cannot remove the manifest between the check and the write.
 *
 * In this order: NOT_FOUND: no tag and no delete record with that uid. FAILED_PRECONDITION
 * `NOT_IN_HISTORY`: the digest never was the tag's, or the tag named nothing at `time` (before its
 * first record, or deleted then). A restore to the digest the tag names changes nothing.
 * `TAG_IMMUTABLE`: the restore would move a tag an immutability rule protects (a deleted tag can
 * be brought back, as a push could create it). `MANIFEST_GONE`: the repo no longer stores the
 * manifest (garbage collected).
 */
export async function restoreTag(
  tx: Store,
  args: { uid: string; target: RestoreTarget; now: number },
): Promise<RestoredTag> {
  const { uid, target } = args;
  await withRegistryLock(tx, "shared");
  const live = await tx.tags.get(uid);
  const named = live ? { repoUid: live.repoUid, name: live.name } : await tx.tags.deletedTag(uid);
  if (!named) throw notFound("tag", uid);
  const { repoUid, name } = named;

  let digest: string;
  if ("digest" in target) {
    if (!(await tx.tags.pointedTo(repoUid, [name], target.digest))) {
      throw failedPrecondition("NOT_IN_HISTORY", `tag ${name} never pointed to ${target.digest}`, uid);
    }
    digest = target.digest;
  } else {
    const record = await tx.tags.historyAt(repoUid, name, target.time);
    const at = new Date(target.time).toISOString();
    if (!record)
      throw failedPrecondition("NOT_IN_HISTORY", `tag ${name} has no history at or before ${at}`, uid);
    if (record.digest === "")
      throw failedPrecondition("NOT_IN_HISTORY", `tag ${name} was deleted at ${at}`, uid);
    digest = record.digest;
  }
  const current = live ?? (await tx.tags.getByName(repoUid, name));
  if (current?.digest === digest) return { row: current, change: "none" };
  if (current) await refuseImmutableTag(tx, current);
  if (!(await tx.manifests.has(repoUid, digest))) {
    throw failedPrecondition(
      "MANIFEST_GONE",
      `manifest ${digest} of tag ${name} is no longer stored (garbage collection removed it)`,
      digest,
    );
  }

  const row = await tx.tags.put({
    repoUid,
    name,
    digest,
    deprecated: current?.deprecated ?? false,
    newUid: uid,
    now: args.now,
    beforeMove: (tag) => refuseImmutableTag(tx, tag),
  });
  return { row, change: current ? "updated" : "created" };
}
