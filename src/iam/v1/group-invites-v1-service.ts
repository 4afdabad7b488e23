import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, withIdFilter } from "../../core/v1-face.js";
import { UIDPFilterSchema } from "../../gen/platform/common/v2/uidp_pb.js";
import type { GroupInvites } from "../../gen/platform/iam/v1/group_invites_pb.js";
import {
  CreateGroupInviteRequestSchema,
  DeleteGroupInviteRequestSchema,
  type GroupInvitesService,
  ListGroupInvitesRequestSchema,
} from "../../gen/platform/iam/v2/group_invites_pb.js";
import { groupInviteV1Message } from "./group-invites-v1-mapping.js";

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
      return groupInviteV1Message(await v2.createGroupInvite(request, ctx));
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
      return { items: invites.map(groupInviteV1Message) };
    },

    async delete(req, ctx) {
      await v2.deleteGroupInvite(create(DeleteGroupInviteRequestSchema, { uid: req.id }), ctx);
      return {};
    },
  };
}
