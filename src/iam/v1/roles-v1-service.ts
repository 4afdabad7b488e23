import { clone, create, type MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { isRoot, parentOf, requireUidp } from "../../core/uidp.js";
import { foundOrNothing, itemsOf } from "../../core/v1-face.js";
import { v1Crud } from "../../core/v1-face-crud.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import { type UIDPFilter, UIDPFilterSchema } from "../../gen/platform/common/v2/uidp_pb.js";
import type { RoleFilter, Roles, Role as RoleV1 } from "../../gen/platform/iam/v1/roles_pb.js";
import { type RoleSchema, RolesService } from "../../gen/platform/iam/v2/roles_pb.js";
import { capabilitiesFromV1Names, ROLE_V1, roleV1Message } from "./roles-v1-mapping.js";

/** The `parent` filter value naming the root, where the built-in roles live. */
const ROOT_PARENT = "/";

/**
 * The v1 Roles service: the standard v1 CRUD over the v2 RolesService handlers `roles`. Capabilities are
 * read by friendly name (an unknown one is INVALID_ARGUMENT naming it) and answered by friendly name.
 */
export function createRolesV1Service(
  roles: ServiceHandlers<typeof RolesService>,
): ServiceHandlers<typeof Roles> {
  const face = v1Crud(RolesService, roles, ROLE_V1, "/iam/v2/roles");
  return {
    create: (req, ctx) =>
      face.create(req.parentId, req.role && roleV2Input(req.role, "role.capabilities"), ctx),

    async list(req, ctx) {
      if (req.id !== "") {
        requireUidp("id", req.id);
        // Built-in roles (root uids) are everyone's; a custom role is listed only where the caller
        // may list roles, as through the v2 List, so another organization's is no items.
        const found = isRoot(req.id)
          ? await foundOrNothing(() => face.get(req.id, ctx))
          : await face.getIfListed(req.id, [Capability.CAP_IAM_ROLES_LIST], ctx);
        return {
          items: itemsOf(found)
            .map(roleV1Message)
            .filter((role) => matches(role, req)),
        };
      }
      const { items } = await face.list({ uidp: withParent(req.uidp, req.parent), name: req.name }, ctx);
      // v2 lists the built-in roles with every filter; the v1 `parent` filter is exact.
      return { items: items.filter((role) => matches(role, req)) };
    },

    update: (req, ctx) => face.update(roleV2Input(req, "capabilities"), ctx),
    delete: (req, ctx) => face.delete(req.id, ctx),
  };
}

/**
 * The v2 role a v1 body writes: by table but for its friendly capability names, read here;
 * `capabilitiesField` names them in errors.
 */
function roleV2Input(v1: RoleV1, capabilitiesField: string): MessageInitShape<typeof RoleSchema> {
  return { ...ROLE_V1.toV2(v1), capabilities: capabilitiesFromV1Names(capabilitiesField, v1.capabilities) };
}

/** The UIDP filter with the v1 `parent` filter added: `/` for root-level roles, else its children. */
function withParent(uidp: UIDPFilter | undefined, parent: string): UIDPFilter {
  const filter = uidp ? clone(UIDPFilterSchema, uidp) : create(UIDPFilterSchema);
  if (parent === ROOT_PARENT) filter.inRoot = true;
  else if (parent !== "") filter.childrenOf = requireUidp("parent", parent);
  return filter;
}

/** Whether a role found by id also passes the list's other filters (name, parent). */
function matches(role: RoleV1, filter: RoleFilter): boolean {
  if (filter.name !== "" && role.name !== filter.name) return false;
  if (filter.parent === "") return true;
  return parentOf(role.id) === (filter.parent === ROOT_PARENT ? "" : filter.parent);
}
