import { parentOf } from "../core/uidp.js";
import type { ChangeContext } from "../events/event-recorder.js";
import { type MutationDeps, recordedMutation } from "../events/recorded-mutation.js";
import { DeleteTagRequestSchema } from "../gen/platform/registry/v2/tags_pb.js";
import type { TagRow } from "../storage/registry-store.js";
import type { Store } from "../storage/store.js";
import { refuseImmutableTag } from "./immutability/tag-guard.js";

/** Whether a delete may go ahead, given the tag as it is in the delete's transaction. */
export type TagDeleteAdmission = (tx: Store, tag: TagRow) => Promise<boolean>;

/** DeleteTag's admission: a tag an immutability rule protects is FAILED_PRECONDITION `TAG_IMMUTABLE`. */
const refuseImmutable: TagDeleteAdmission = async (tx, tag) => {
  await refuseImmutableTag(tx, tag);
  return true;
};

/**
 * Deletes tag `uid` the way DeleteTag does, in one transaction: the tag goes, its history gains a
 * delete record (an empty digest at `ctx.clock.now()`), and a `tag.deleted` event of its repo is
 * recorded. The tag is read once, in that transaction, and `admit` decides first: false deletes
 * nothing, a throw refuses. By default a tag an immutability rule protects is refused
 * (FAILED_PRECONDITION `TAG_IMMUTABLE`); retention passes its own admission, which skips a tag
 * that moved or became protected since the run judged it. Resolves true when the tag was deleted,
 * false when it did not exist or was not admitted.
 */
export async function deleteTagRecorded(
  deps: MutationDeps,
  ctx: ChangeContext,
  uid: string,
  admit: TagDeleteAdmission = refuseImmutable,
): Promise<boolean> {
  return recordedMutation(
    deps,
    ctx,
    async (tx) => {
      const tag = await tx.tags.get(uid);
      if (tag === undefined || !(await admit(tx, tag))) return false;
      return tx.tags.delete(uid, ctx.clock.now());
    },
    (deleted) =>
      deleted
        ? {
            resource: "tag",
            verb: "deleted",
            subject: uid,
            group: parentOf(uid),
            schema: DeleteTagRequestSchema,
            body: { uid },
          }
        : undefined,
  );
}
