import { isInternalOnly } from "../authz/capabilities.js";
import { pageRequestOf, toUidpFilter } from "../core/api-convert.js";
import { principalOf } from "../core/context.js";
import {
  failedPrecondition,
  invalidArgument,
  notFound,
  permissionDenied,
  requireFound,
} from "../core/errors.js";
import { resolveUpdateMask } from "../core/field-mask.js";
import { paginate } from "../core/list.js";
import { namedResourceList, pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { isRoot, newChildUid, parentOf, requireUidp } from "../core/uidp.js";
import { validateDescription, validateName } from "../core/validation.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import { DeleteRoleRequestSchema, RoleSchema, type RolesService } from "../gen/platform/iam/v2/roles_pb.js";
import type { RoleFilter, RoleRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";
import { roleMessage } from "./role-mapping.js";
import type { IamServiceDeps } from "./service-deps.js";

const ROLE_LIST = namedResourceList<RoleRow>();

const ROLE_MASK = {
  known: ["uid", "name", "description", "capabilities", "create_time", "update_time"],
  updatable: ["name", "description", "capabilities"],
} as const;

/**
 * RolesService: built-in roles (read-only, visible to every caller) and custom roles under groups.
 * Creates, updates and deletes of custom roles are events of the role's group.
 */
export function createRolesService(deps: IamServiceDeps): ServiceHandlers<typeof RolesService> {
  const { store } = deps;
  return {
    async listRoles(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_IAM_ROLES_LIST]);
      const filter: RoleFilter = { uidp: toUidpFilter(req.uidp), includeBuiltIn: true };
      if (req.name) filter.name = req.name;
      const page = await paginate(pageRequestOf(req), filter, ROLE_LIST, deps.pageTokens, (window) =>
        store.roles.list({ ...filter, within }, window),
      );
      return {
        roles: page.items.map(roleMessage),
        ...pageEnvelope(page),
      };
    },

    async getRole(req, ctx) {
      requireUidp("uid", req.uid);
      if (!isRoot(req.uid)) await ctx.access.require(req.uid, [Capability.CAP_IAM_ROLES_LIST]);
      const row = await store.roles.get(req.uid);
      if (!row || (isRoot(req.uid) && !row.builtIn)) throw notFound("role", req.uid);
      return roleMessage(row);
    },

    async createRole(req, ctx) {
      const input = req.role;
      validateName(input?.name ?? "");
      validateDescription(input?.description ?? "");
      if (!input) throw invalidArgument("name", "is required");
      const capabilities = validateCapabilities(input.capabilities, principalOf(ctx).isAdmin);
      if (!(await store.groups.get(req.parent))) throw notFound("group", req.parent);
      const now = ctx.clock.now();
      const row: RoleRow = {
        uid: newChildUid(req.parent),
        name: input.name,
        description: input.description,
        capabilities,
        builtIn: false,
        createTime: now,
        updateTime: now,
      };
      const message = roleMessage(row);
      await recordedMutation(deps, ctx, (tx) => tx.roles.insert(row), {
        resource: "role",
        verb: "created",
        subject: row.uid,
        group: req.parent,
        schema: RoleSchema,
        body: message,
      });
      return message;
    },

    async updateRole(req, ctx) {
      const input = req.role;
      if (!input) throw invalidArgument("role", "is required");
      const current = await store.roles.get(input.uid);
      if (!current) throw notFound("role", input.uid);
      if (current.builtIn)
        throw failedPrecondition("BUILT_IN_ROLE", `role ${input.uid} is built-in and read-only`);
      const fields = resolveUpdateMask(ROLE_MASK, req.updateMask?.paths ?? [], () => {
        const out: string[] = [];
        if (input.name !== "") out.push("name");
        if (input.description !== "") out.push("description");
        if (input.capabilities.length > 0) out.push("capabilities");
        return out;
      });
      const next: RoleRow = { ...current, updateTime: ctx.clock.now() };
      if (fields.includes("name")) {
        validateName(input.name);
        next.name = input.name;
      }
      if (fields.includes("description")) {
        validateDescription(input.description);
        next.description = input.description;
      }
      if (fields.includes("capabilities")) {
        next.capabilities = validateCapabilities(input.capabilities, principalOf(ctx).isAdmin);
      }
      const message = roleMessage(next);
      await recordedMutation(deps, ctx, (tx) => requireFound(tx.roles.update(next), "role", input.uid), {
        resource: "role",
        verb: "updated",
        subject: next.uid,
        group: parentOf(next.uid),
        schema: RoleSchema,
        body: message,
      });
      if (fields.includes("capabilities")) deps.bindingsChanged();
      return message;
    },

    async deleteRole(req, ctx) {
      const deleteUnusedRole = async (tx: Store) => {
        const row = await tx.roles.get(req.uid);
        if (!row) throw notFound("role", req.uid);
        if (row.builtIn)
          throw failedPrecondition("BUILT_IN_ROLE", `role ${req.uid} is built-in and cannot be deleted`);
        const bound = await tx.roleBindings.countByRole(req.uid);
        if (bound > 0) {
          throw failedPrecondition(
            "RESOURCE_IN_USE",
            `role ${req.uid} is still bound by ${bound} role binding(s)`,
            req.uid,
          );
        }
        const idps = await tx.identityProviders.countByDefaultRole(req.uid);
        const mappings = await tx.externalGroupRoleMappings.countByRole(req.uid);
        if (idps + mappings > 0) {
          throw failedPrecondition(
            "RESOURCE_IN_USE",
            `role ${req.uid} is the default role of ${idps} identity provider(s) and mapped by ${mappings} external group role mapping(s)`,
            req.uid,
          );
        }
        await tx.roles.delete(req.uid);
      };
      await recordedMutation(deps, ctx, deleteUnusedRole, {
        resource: "role",
        verb: "deleted",
        subject: req.uid,
        group: parentOf(req.uid),
        schema: DeleteRoleRequestSchema,
        body: { uid: req.uid },
      });
      return {};
    },
  };
}

/**
 * At least one capability, none unknown or UNKNOWN; internal-only capabilities only together with
 * CAP_INTERNAL, and only from the platform administrator. Returns them sorted without duplicates.
 */
function validateCapabilities(caps: readonly Capability[], callerIsAdmin: boolean): number[] {
  if (caps.length === 0) throw invalidArgument("capabilities", "at least one capability is required");
  const known = new Set(Object.values(Capability).filter((v): v is number => typeof v === "number"));
  for (const cap of caps) {
    if (cap === Capability.UNKNOWN || !known.has(cap)) {
      throw invalidArgument("capabilities", `unknown capability ${cap}`);
    }
  }
  const unique = [...new Set(caps)].sort((a, b) => a - b);
  const internal = unique.filter((c) => isInternalOnly(c) && c !== Capability.CAP_INTERNAL);
  if (internal.length > 0 && !unique.includes(Capability.CAP_INTERNAL)) {
    throw invalidArgument(
      "capabilities",
      `internal-only capabilities (${internal.map((c) => Capability[c]).join(", ")}) require CAP_INTERNAL`,
    );
  }
  if (!callerIsAdmin && unique.some((c) => isInternalOnly(c))) {
    throw permissionDenied("only the platform administrator may grant internal-only capabilities");
  }
  return unique;
}
