import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { withIdFilter } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import { v1Crud } from "../../core/v1-face-crud.js";
import { UIDPFilterSchema } from "../../gen/platform/common/v2/uidp_pb.js";
import {
  type GroupInvites,
  GroupInviteSchema as GroupInviteV1Schema,
} from "../../gen/platform/iam/v1/group_invites_pb.js";
import { GroupInviteSchema, GroupInvitesService } from "../../gen/platform/iam/v2/group_invites_pb.js";
import { roleV1Message } from "./roles-v1-mapping.js";

/**
 * A v1 invite: the v2 one by table (`uid` → `id`, `expirationTime` → `expiration`, `createTime` →
 * `createdAt`; the code only when the v2 answer has one, the create answer), its hydrated role as a
 * v1 Role (friendly capability names). Never updated: no PUT.
 */
const INVITE_V1 = v1Resource({
  v1: GroupInviteV1Schema,
  v2: GroupInviteSchema,
  updatable: [],
  v1Extras: ({ role }) => ({
    role:
      role &&
      roleV1Message({
        uid: role.uid,
        name: role.name,
        description: role.description,
        capabilities: role.capabilities,
      }),
  }),
});

/**
 * GroupInvites (v1): the standard v1 CRUD over the v2 GroupInvitesService handlers (docs/adr/0030),
 * without PUT. Create answers the code (only there); List gathers every v2 page, newest first,
 * `group` meaning the group's own invites, and a filter on `id` narrowing it (missing → empty list).
 */
export function createGroupInvitesV1Service(
  v2: ServiceHandlers<typeof GroupInvitesService>,
): ServiceHandlers<typeof GroupInvites> {
  const face = v1Crud(GroupInvitesService, v2, INVITE_V1, "/iam/v2/groupInvites");
  return {
    // The v1 create request is no invite: its fields name the v2 invite's.
    create: (req, ctx) =>
      face.create(
        req.group,
        { roleUid: req.role, email: req.email, ttl: req.ttl, singleUse: req.singleUse },
        ctx,
      ),

    async list(req, ctx) {
      const uidp = withIdFilter(create(UIDPFilterSchema, { childrenOf: req.group }), req.id);
      return face.list({ uidp, keyId: req.keyId }, ctx);
    },

    delete: (req, ctx) => face.delete(req.id, ctx),
  };
}
