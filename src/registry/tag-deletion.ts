import { parentOf } from "../core/uidp.js";
import type { ChangeContext } from "../events/event-recorder.js";
import { type MutationDeps, recordedMutation } from "../events/recorded-mutation.js";
import { DeleteTagRequestSchema } from "../gen/platform/registry/v2/tags_pb.js";
import type { Store } from "../storage/store.js";
import { refuseImmutableTag } from "./immutability/tag-guard.js";

/**
 * Deletes tag `uid` the way DeleteTag does, in one transaction: the tag goes, its history gains a
 * delete record (an empty digest at `ctx.clock.now()`), and a `tag.deleted` event of its repo is
 * recorded. `guard`, when given, runs first in the same transaction: when it resolves false
 * nothing is deleted (retention re-checks there that the tag is still the one it judged). Then a
 * tag an immutability rule protects is refused: FAILED_PRECONDITION `TAG_IMMUTABLE`, nothing
 * deleted. Resolves true when the tag was deleted, false when it did not exist or the guard refused.
 */
export async function deleteTagRecorded(
  deps: MutationDeps,
  ctx: ChangeContext,
  uid: string,
  guard?: (tx: Store) => Promise<boolean>,
): Promise<boolean> {
  return recordedMutation(
    deps,
    ctx,
    async (tx) => {
      if (guard && !(await guard(tx))) return false;
      const tag = await tx.tags.get(uid);
      if (tag === undefined) return false;
      await refuseImmutableTag(tx, tag);
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
