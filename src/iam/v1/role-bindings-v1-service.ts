import { create } from "@bufbuild/protobuf";
import type { RequestContext } from "../../core/context.js";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, itemsOf, scopedGetOrNothing } from "../../core/v1-face.js";
import { Capability } from "../../gen/platform/capabilities/capabilities_pb.js";
import type { RoleBindings } from "../../gen/platform/iam/v1/role_bindings_pb.js";
import type { Role as RoleV1 } from "../../gen/platform/iam/v1/roles_pb.js";
import {
  BatchCreateRoleBindingsRequestSchema,
  CreateRoleBindingRequestSchema,
  DeleteRoleBindingRequestSchema,
  GetRoleBindingRequestSchema,
  ListRoleBindingsRequestSchema,
  type RoleBinding,
  RoleBindingSchema,
  type RoleBindingsService,
  UpdateRoleBindingRequestSchema,
} from "../../gen/platform/iam/v2/role_bindings_pb.js";
import { ListRolesRequestSchema, type RolesService } from "../../gen/platform/iam/v2/roles_pb.js";
import {
  ROLE_BINDING_V1,
  roleBindingV1ListItem,
  roleBindingV1Message,
  roleBindingV2Input,
} from "./role-bindings-v1-mapping.js";
import { roleV1Message } from "./roles-v1-mapping.js";

/**
 * The v1 RoleBindings service: a translation over the v2 RoleBindingsService handlers `bindings`.
 * Listed items carry their role whole, capabilities included, read through the v2 RolesService
 * handlers `roles` (so only roles the caller may list show their capabilities).
 */
export function createRoleBindingsV1Service(
  bindings: ServiceHandlers<typeof RoleBindingsService>,
  roles: ServiceHandlers<typeof RolesService>,
): ServiceHandlers<typeof RoleBindings> {
  /** The v1 roles among `uids` the caller may list, by id. */
  async function visibleRoles(uids: readonly string[], ctx: RequestContext): Promise<Map<string, RoleV1>> {
    if (uids.length === 0) return new Map();
    const found = await everyV2Item(
      "/iam/v2/roles",
      (paging) =>
        roles.listRoles(create(ListRolesRequestSchema, { uidp: { ids: [...uids] }, ...paging }), ctx),
      (page) => page.roles,
    );
    return new Map(found.map((role) => [role.uid ?? "", roleV1Message(role)]));
  }

  return {
    async create(req, ctx) {
      const v2Request = create(CreateRoleBindingRequestSchema, {
        parent: req.parent,
        ...(req.roleBinding ? { roleBinding: roleBindingV2Input(req.roleBinding) } : {}),
      });
      return roleBindingV1Message(await bindings.createRoleBinding(v2Request, ctx));
    },

    async createBatch(req, ctx) {
      const v2Request = create(BatchCreateRoleBindingsRequestSchema, {
        parent: req.parent,
        requests: req.roleBindings.map((binding) => ({ roleBinding: roleBindingV2Input(binding) })),
      });
      const created = await bindings.batchCreateRoleBindings(v2Request, ctx);
      return { items: (created.roleBindings ?? []).map(roleBindingV1Message) };
    },

    async list(req, ctx) {
      let found: RoleBinding[];
      if (req.id !== "") {
        const one = await scopedGetOrNothing(ctx, req.id, [Capability.CAP_IAM_ROLE_BINDINGS_LIST], () =>
          bindings.getRoleBinding(create(GetRoleBindingRequestSchema, { uid: req.id }), ctx),
        );
        found = itemsOf(one).map((binding) => create(RoleBindingSchema, binding));
      } else {
        const listed = await everyV2Item(
          "/iam/v2/roleBindings",
          (paging) =>
            bindings.listRoleBindings(
              create(ListRoleBindingsRequestSchema, { uidp: req.uidp, ...paging }),
              ctx,
            ),
          (page) => page.roleBindings,
        );
        found = listed.map((binding) => create(RoleBindingSchema, binding));
      }
      const fullRoles = await visibleRoles([...new Set(found.map((b) => b.roleUid))], ctx);
      return { items: found.map((binding) => roleBindingV1ListItem(binding, fullRoles)) };
    },

    async update(req, ctx) {
      const v2Request = create(UpdateRoleBindingRequestSchema, {
        roleBinding: roleBindingV2Input(req),
        updateMask: ROLE_BINDING_V1.mask,
      });
      return roleBindingV1Message(await bindings.updateRoleBinding(v2Request, ctx));
    },

    async delete(req, ctx) {
      await bindings.deleteRoleBinding(create(DeleteRoleBindingRequestSchema, { uid: req.id }), ctx);
      return {};
    },
  };
}
