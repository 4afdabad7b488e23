import { create } from "@bufbuild/protobuf";
import { toTimestamp } from "../core/api-convert.js";
import { type Role, RoleSchema } from "../gen/platform/iam/v2/roles_pb.js";
import type { RoleRow } from "../storage/iam-store.js";

/** The API message of a stored role. */
export function roleMessage(row: RoleRow): Role {
  return create(RoleSchema, {
    uid: row.uid,
    name: row.name,
    description: row.description,
    capabilities: row.capabilities,
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
  });
}
