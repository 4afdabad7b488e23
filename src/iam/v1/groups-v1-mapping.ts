import { v1Resource } from "../../core/v1-face-convert.js";
import { GroupSchema as GroupV1Schema, OrgStatus } from "../../gen/platform/iam/v1/groups_pb.js";
import { GroupSchema } from "../../gen/platform/iam/v2/groups_pb.js";

/**
 * A v1 group: the v2 group by table (`uid` → `id`). Wharf has no organization kinds and no
 * provisioning or suspension, so `kind` stays ORG_KIND_UNSPECIFIED and every group that exists is
 * ORG_STATUS_READY. A body writes `id`, `name` and `description`: `kind`, `status`, `verified` and
 * `resourceLimits` are not the caller's to set.
 */
export const GROUP_V1 = v1Resource({
  v1: GroupV1Schema,
  v2: GroupSchema,
  updatable: ["name", "description"],
  v1Extras: () => ({ status: OrgStatus.READY }),
});

export const groupV1Message = GROUP_V1.toV1;
export const groupV2Input = GROUP_V1.toV2;
