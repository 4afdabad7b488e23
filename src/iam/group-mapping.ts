import { create } from "@bufbuild/protobuf";
import { toTimestamp } from "../core/api-convert.js";
import { type Group, GroupSchema } from "../gen/platform/iam/v2/groups_pb.js";
import type { GroupRow } from "../storage/iam-store.js";

/** The API message of a stored group. */
export function groupMessage(row: GroupRow): Group {
  return create(GroupSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    verified: row.verified,
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
  });
}
