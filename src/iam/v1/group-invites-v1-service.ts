import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, withIdFilter } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import { UIDPFilterSchema } from "../../gen/platform/common/v2/uidp_pb.js";
import {
  type GroupInvites,
  GroupInviteSchema as GroupInviteV1Schema,
} from "../../gen/platform/iam/v1/group_invites_pb.js";
import {
  CreateGroupInviteRequestSchema,
  DeleteGroupInviteRequestSchema,
  GroupInviteSchema,
  type GroupInvitesService,
  ListGroupInvitesRequestSchema,
} from "../../gen/platform/iam/v2/group_invites_pb.js";
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
 * GroupInvites (v1): a face over the v2 GroupInvitesService handlers (docs/adr/0030). Create
 * answers the code (only there); List gathers every v2 page, newest first, `group` meaning the
 * group's own invites, and a filter on `id` narrowing it (missing → empty list).
 */
export function createGroupInvitesV1Service(
  v2: ServiceHandlers<typeof GroupInvitesService>,
): ServiceHandlers<typeof GroupInvites> {
  return {
    async create(req, ctx) {
      const request = create(CreateGroupInviteRequestSchema, {
        parent: req.group,
        invite: { roleUid: req.role, email: req.email, ttl: req.ttl, singleUse: req.singleUse },
      });
      return INVITE_V1.toV1(await v2.createGroupInvite(request, ctx));
    },

    async list(req, ctx) {
      const uidp = withIdFilter(create(UIDPFilterSchema, { childrenOf: req.group }), req.id);
      const invites = await everyV2Item(
        "/iam/v2/groupInvites",
        (paging) =>
          v2.listGroupInvites(
            create(ListGroupInvitesRequestSchema, { uidp, keyId: req.keyId, ...paging }),
            ctx,
          ),
        (page) => page.invites,
      );
      return { items: invites.map(INVITE_V1.toV1) };
    },

    async delete(req, ctx) {
      await v2.deleteGroupInvite(create(DeleteGroupInviteRequestSchema, { uid: req.id }), ctx);
      return {};
    },
  };
}
