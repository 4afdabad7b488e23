import { create } from "@bufbuild/protobuf";
import { principalOf } from "../../core/context.js";
import { notFound } from "../../core/errors.js";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, itemsOf, scopedGetOrNothing } from "../../core/v1-face.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import type { Groups } from "../../gen/platform/iam/v1/groups_pb.js";
import {
  CreateGroupRequestSchema,
  DeleteGroupRequestSchema,
  GetGroupRequestSchema,
  type GroupsService,
  ListGroupsRequestSchema,
  UpdateGroupRequestSchema,
} from "../../gen/platform/iam/v2/groups_pb.js";
import type { Store } from "../../storage/store.js";
import { groupMessage } from "../group-mapping.js";
import { GROUP_V1, groupV1Message, groupV2Input } from "./groups-v1-mapping.js";

/**
 * The v1 Groups service: a translation over the v2 GroupsService handlers `groups` (same
 * validation, capability checks, events and errors). LookupGroup has no v2 counterpart and reads
 * `store` (the groups and identities the v2 side stores).
 */
export function createGroupsV1Service(
  groups: ServiceHandlers<typeof GroupsService>,
  store: Store,
): ServiceHandlers<typeof Groups> {
  return {
    async create(req, ctx) {
      const v2Request = create(CreateGroupRequestSchema, {
        parent: req.parent,
        ...(req.group ? { group: groupV2Input(req.group) } : {}),
      });
      return groupV1Message(await groups.createGroup(v2Request, ctx));
    },

    async list(req, ctx) {
      if (req.id !== "") {
        const found = await scopedGetOrNothing(ctx, req.id, [Capability.CAP_IAM_GROUPS_LIST], () =>
          groups.getGroup(create(GetGroupRequestSchema, { uid: req.id }), ctx),
        );
        const matching = itemsOf(found).filter((g) => req.name === "" || g.name === req.name);
        return { items: matching.map(groupV1Message) };
      }
      const all = await everyV2Item(
        "/iam/v2/groups",
        (paging) =>
          groups.listGroups(
            create(ListGroupsRequestSchema, { uidp: req.uidp, name: req.name, ...paging }),
            ctx,
          ),
        (page) => page.groups,
      );
      return { items: all.map(groupV1Message) };
    },

    async update(req, ctx) {
      const v2Request = create(UpdateGroupRequestSchema, {
        group: groupV2Input(req),
        updateMask: GROUP_V1.mask,
      });
      return groupV1Message(await groups.updateGroup(v2Request, ctx));
    },

    async delete(req, ctx) {
      await groups.deleteGroup(create(DeleteGroupRequestSchema, { uid: req.id }), ctx);
      return {};
    },

    async lookupGroup(_req, ctx) {
      const identity = await store.identities.get(principalOf(ctx).identityUid);
      const email = identity?.email ?? "";
      const domain = email.includes("@") ? email.slice(email.lastIndexOf("@") + 1).toLowerCase() : "";
      const organization = domain === "" ? undefined : await store.groups.getByName("", domain);
      // One answer for every miss: the call must not tell which part failed.
      if (!organization?.verified) throw notFound("group", "the verified organization of your email domain");
      return { group: groupV1Message(groupMessage(organization)) };
    },
  };
}
