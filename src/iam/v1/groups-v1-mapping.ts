import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type Group as GroupV1,
  GroupSchema as GroupV1Schema,
  OrgStatus,
} from "../../gen/platform/iam/v1/groups_pb.js";
import { GroupSchema } from "../../gen/platform/iam/v2/groups_pb.js";

/**
 * The v1 shape of a group a v2 handler answered: `uid` becomes `id`; the other fields carry over.
 * Wharf has no organization kinds and no provisioning or suspension, so `kind` stays
 * ORG_KIND_UNSPECIFIED and every group that exists is ORG_STATUS_READY.
 */
export function groupV1Message(v2: MessageInitShape<typeof GroupSchema>): GroupV1 {
  const group = create(GroupSchema, v2);
  return create(GroupV1Schema, {
    id: group.uid,
    name: group.name,
    description: group.description,
    resourceLimits: group.resourceLimits,
    verified: group.verified,
    status: OrgStatus.READY,
  });
}

/**
 * The v2 group a v1 body writes: its `id`, `name` and `description` (the writable fields). `kind`,
 * `status`, `verified` and `resourceLimits` are not the caller's to set and are left out.
 */
export function groupV2Input(v1: GroupV1): MessageInitShape<typeof GroupSchema> {
  return { uid: v1.id, name: v1.name, description: v1.description };
}
