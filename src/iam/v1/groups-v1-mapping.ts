import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { type Group as GroupV1, GroupSchema as GroupV1Schema } from "../../gen/platform/iam/v1/groups_pb.js";
import { GroupSchema } from "../../gen/platform/iam/v2/groups_pb.js";

/** The v1 shape of a group a v2 handler answered: `uid` becomes `id`; the other fields carry over. */
export function groupV1Message(v2: MessageInitShape<typeof GroupSchema>): GroupV1 {
  const group = create(GroupSchema, v2);
  return create(GroupV1Schema, {
    id: group.uid,
    name: group.name,
    description: group.description,
    resourceLimits: group.resourceLimits,
    verified: group.verified,
  });
}
