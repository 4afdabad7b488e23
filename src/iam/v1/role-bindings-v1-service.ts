import { create } from "@bufbuild/protobuf";
import type { RequestContext } from "../../core/context.js";
import type { ServiceHandlers } from "../../core/service.js";
import { itemsOf } from "../../core/v1-face.js";
import { v1Crud } from "../../core/v1-face-crud.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import type { RoleBindings } from "../../gen/platform/iam/v1/role_bindings_pb.js";
import type { Role as RoleV1 } from "../../gen/platform/iam/v1/roles_pb.js";
import {
  BatchCreateRoleBindingsRequestSchema,
  RoleBindingsService,
} from "../../gen/platform/iam/v2/role_bindings_pb.js";
import { RolesService } from "../../gen/platform/iam/v2/roles_pb.js";
import {
  ROLE_BINDING_V1,
  roleBindingV1ListItem,
  roleBindingV1Message,
  roleBindingV2Input,
} from "./role-bindings-v1-mapping.js";
import { ROLE_V1, roleV1Message } from "./roles-v1-mapping.js";

/**
 * The v1 RoleBindings service: the standard v1 CRUD over the v2 RoleBindingsService handlers `bindings`.
 * Listed items carry their role whole, capabilities included, read through the v2 RolesService
 * handlers `roles` (so only roles the caller may list show their capabilities).
 */
export function createRoleBindingsV1Service(
  bindings: ServiceHandlers<typeof RoleBindingsService>,
  roles: ServiceHandlers<typeof RolesService>,
): ServiceHandlers<typeof RoleBindings> {
  const face = v1Crud(RoleBindingsService, bindings, ROLE_BINDING_V1, "/iam/v2/roleBindings");
  const roleFace = v1Crud(RolesService, roles, ROLE_V1, "/iam/v2/roles");

  /** The v1 roles among `uids` the caller may list, by id. */
  async function visibleRoles(uids: readonly string[], ctx: RequestContext): Promise<Map<string, RoleV1>> {
    if (uids.length === 0) return new Map();
    const found = await roleFace.gather({ uidp: { ids: [...uids] } }, ctx);
    return new Map(found.map((role) => [role.uid, roleV1Message(role)]));
  }

  return {
    create: (req, ctx) =>
      face.create(req.parent, req.roleBinding && roleBindingV2Input(req.roleBinding), ctx),

    async createBatch(req, ctx) {
      const v2Request = create(BatchCreateRoleBindingsRequestSchema, {
        parent: req.parent,
        requests: req.roleBindings.map((binding) => ({ roleBinding: roleBindingV2Input(binding) })),
      });
      const created = await bindings.batchCreateRoleBindings(v2Request, ctx);
      return { items: (created.roleBindings ?? []).map(roleBindingV1Message) };
    },

    async list(req, ctx) {
      // Listed bindings are hydrated v2 ones, answered with their roles whole (below).
      const found =
        req.id !== ""
          ? itemsOf(await face.getIfListed(req.id, [Capability.CAP_IAM_ROLE_BINDINGS_LIST], ctx))
          : await face.gather({ uidp: req.uidp }, ctx);
      const fullRoles = await visibleRoles([...new Set(found.map((b) => b.roleUid))], ctx);
      return { items: found.map((binding) => roleBindingV1ListItem(binding, fullRoles)) };
    },

    update: (req, ctx) => face.update(roleBindingV2Input(req), ctx),
    delete: (req, ctx) => face.delete(req.id, ctx),
  };
}
