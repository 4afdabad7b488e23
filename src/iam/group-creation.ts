import { validateGroupName } from "../core/registry-name.js";
import { newChildUid, newRootUid } from "../core/uidp.js";
import { validateDescription } from "../core/validation.js";
import type { ChangeContext, EventRecorder } from "../events/event-recorder.js";
import { GroupSchema } from "../gen/platform/iam/v2/groups_pb.js";
import type { GroupRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";
import { admitNewResource } from "./creation-quota.js";
import { groupMessage } from "./group-mapping.js";

/**
 * Throws INVALID_ARGUMENT on `name` unless a group may be created with `name` and `description`:
 * the rule of the API's CreateGroup and of a push creating folders. `subject` starts the
 * description (default `name`; a push names the group: `group name "x"`).
 */
export function validateNewGroup(name: string, description: string, subject?: string): void {
  validateGroupName(name, "name", subject);
  validateDescription(description);
}

/** The row of a new group under `parentUid` ("" for an organization), not yet verified. */
export function newGroupRow(parentUid: string, name: string, description: string, now: number): GroupRow {
  return {
    uid: parentUid === "" ? newRootUid() : newChildUid(parentUid),
    name,
    description,
    verified: false,
    createTime: now,
    updateTime: now,
  };
}

/**
 * Creates group `row` (validated with validateNewGroup) in transaction `tx` and records its
 * `group.created` event there: the one create path of groups, shared by the API and by pushes. A
 * name taken under the same parent is ALREADY_EXISTS (from the store).
 */
export async function createGroupIn(
  tx: Store,
  deps: { events: EventRecorder },
  ctx: ChangeContext,
  row: GroupRow,
  parentUid: string,
): Promise<void> {
  await admitNewResource(tx, { resource: "group", parentUid });
  await tx.groups.insert(row);
  await deps.events.change(tx, ctx, {
    resource: "group",
    verb: "created",
    subject: row.uid,
    group: row.uid,
    schema: GroupSchema,
    body: groupMessage(row),
  });
}
