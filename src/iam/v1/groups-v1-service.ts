import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { itemsOf } from "../../core/v1-face.js";
import { v1Crud } from "../../core/v1-face-crud.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import type { Groups } from "../../gen/platform/iam/v1/groups_pb.js";
import { GroupsService, LookupGroupRequestSchema } from "../../gen/platform/iam/v2/groups_pb.js";
import { GROUP_V1, groupV1Message, groupV2Input } from "./groups-v1-mapping.js";

/**
 * The v1 Groups service: the standard v1 CRUD over the v2 GroupsService handlers `groups` (same
 * validation, capability checks, events and errors), LookupGroup included.
 */
export function createGroupsV1Service(
  groups: ServiceHandlers<typeof GroupsService>,
): ServiceHandlers<typeof Groups> {
  const face = v1Crud(GroupsService, groups, GROUP_V1, "/iam/v2/groups");
  return {
    create: (req, ctx) => face.create(req.parent, req.group && groupV2Input(req.group), ctx),

    async list(req, ctx) {
      if (req.id !== "") {
        const found = await face.getIfListed(req.id, [Capability.CAP_IAM_GROUPS_LIST], ctx);
        const matching = itemsOf(found).filter((g) => req.name === "" || g.name === req.name);
        return { items: matching.map(groupV1Message) };
      }
      return face.list({ uidp: req.uidp, name: req.name }, ctx);
    },

    update: (req, ctx) => face.update(groupV2Input(req), ctx),
    delete: (req, ctx) => face.delete(req.id, ctx),

    async lookupGroup(_req, ctx) {
      const organization = await groups.lookupGroup(create(LookupGroupRequestSchema), ctx);
      return { group: groupV1Message(organization) };
    },
  };
}
