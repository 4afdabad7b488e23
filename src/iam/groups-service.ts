import { OWNER_ROLE_UID } from "../authz/built-in-roles.js";
import { pageRequestOf, toUidpFilter } from "../core/api-convert.js";
import type { Principal } from "../core/context.js";
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
import { validateGroupName } from "../core/registry-name.js";
import type { ServiceHandlers } from "../core/service.js";
import { newChildUid, parentOf, requireUidp } from "../core/uidp.js";
import { validateDescription } from "../core/validation.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import {
  DeleteGroupRequestSchema,
  GroupSchema,
  type GroupsService,
} from "../gen/platform/iam/v2/groups_pb.js";
import type { GroupChildren, GroupRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";
import { createGroupIn, newGroupRow, validateNewGroup } from "./group-creation.js";
import { groupMessage } from "./group-mapping.js";
import type { IamServiceDeps } from "./service-deps.js";

const GROUP_LIST = namedResourceList<GroupRow>();

const GROUP_MASK = {
  known: ["uid", "name", "description", "resource_limits", "verified", "create_time", "update_time"],
  updatable: ["name", "description", "verified"],
} as const;

/** ErrorInfo.reason of a refused use of the reserved public namespace name. */
export const RESERVED_NAME_REASON = "RESERVED_NAME";

/**
 * GroupsService: organizations (root groups) and nested groups. Creates and updates are events of
 * the group itself, deletes events of its parent. Group names are registry path components
 * (validateGroupName). The public namespace's name (`deps.publicNamespace`) is reserved: only the
 * platform administrator may create an organization of that name or rename one to it; anyone else
 * gets PERMISSION_DENIED with ErrorInfo reason RESERVED_NAME (docs/adr/0015).
 */
export function createGroupsService(deps: IamServiceDeps): ServiceHandlers<typeof GroupsService> {
  const { store } = deps;

  /** Throws unless `principal` may give the organization (root group) the name `name`. */
  function requireMayNameOrganization(principal: Principal | undefined, name: string): void {
    if (name !== deps.publicNamespace || principal?.isAdmin) return;
    throw permissionDenied(
      `the organization name "${name}" is reserved for the public namespace; only the platform administrator may use it`,
      RESERVED_NAME_REASON,
    );
  }

  return {
    async listGroups(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_IAM_GROUPS_LIST]);
      const filter = { uidp: toUidpFilter(req.uidp), ...(req.name ? { name: req.name } : {}) };
      const page = await paginate(pageRequestOf(req), filter, GROUP_LIST, deps.pageTokens, (window) =>
        store.groups.list({ ...filter, within }, window),
      );
      return {
        groups: page.items.map(groupMessage),
        ...pageEnvelope(page),
      };
    },

    async getGroup(req) {
      const row = await store.groups.get(req.uid);
      if (!row) throw notFound("group", req.uid);
      return groupMessage(row);
    },

    async createGroup(req, ctx) {
      const principal = principalOf(ctx);
      const input = req.group;
      validateNewGroup(input?.name ?? "", input?.description ?? "");
      const parent = req.parent;
      if (parent === "") requireMayNameOrganization(principal, input?.name ?? "");
      // A token outlives a deleted identity; an organization must not be created for a ghost.
      if (!principal.isAdmin && !(await store.identities.get(principal.identityUid))) {
        throw permissionDenied("the calling identity no longer exists");
      }
      if (parent !== "") {
        requireUidp("parent", parent);
        await ctx.access.require(parent, [Capability.CAP_IAM_GROUPS_CREATE]);
        if (!(await store.groups.get(parent))) throw notFound("group", parent);
      }
      const now = ctx.clock.now();
      const row = newGroupRow(parent, input?.name ?? "", input?.description ?? "", now);
      const insertGroup = async (tx: Store) => {
        await createGroupIn(tx, deps, ctx, row, parent);
        // Whoever creates an organization owns it; the administrator needs no binding.
        if (parent === "" && !principal.isAdmin) {
          // Checked again under the lock: an identity deleted meanwhile must not own the new org.
          if (!(await tx.identities.lockForReference(principal.identityUid))) {
            throw permissionDenied("the calling identity no longer exists");
          }
          await tx.roleBindings.insert({
            uid: newChildUid(row.uid),
            groupUid: row.uid,
            identityUid: principal.identityUid,
            roleUid: OWNER_ROLE_UID,
            createTime: now,
            updateTime: now,
          });
        }
      };
      await store.transaction(insertGroup, ctx.signal);
      if (parent === "") deps.bindingsChanged(principal.identityUid);
      return groupMessage(row);
    },

    async updateGroup(req, ctx) {
      const input = req.group;
      if (!input) throw invalidArgument("group", "is required");
      const current = await store.groups.get(input.uid);
      if (!current) throw notFound("group", input.uid);
      const fields = resolveUpdateMask(GROUP_MASK, req.updateMask?.paths ?? [], () =>
        ["name", "description"].filter((f) => (f === "name" ? input.name !== "" : input.description !== "")),
      );
      const next: GroupRow = { ...current, updateTime: ctx.clock.now() };
      // A name kept as it is passes even when an older rule allowed it (e.g. "my org").
      if (fields.includes("name") && input.name !== current.name) {
        validateGroupName(input.name);
        if (parentOf(current.uid) === "") requireMayNameOrganization(ctx.principal, input.name);
        next.name = input.name;
      }
      if (fields.includes("description")) {
        validateDescription(input.description);
        next.description = input.description;
      }
      if (fields.includes("verified")) {
        if (!ctx.principal?.isAdmin) {
          throw permissionDenied("only the platform administrator may verify an organization");
        }
        if (parentOf(current.uid) !== "") {
          throw invalidArgument("verified", "only an organization (a top-level group) is verified");
        }
        next.verified = input.verified;
      }
      const message = groupMessage(next);
      await recordedMutation(deps, ctx, (tx) => requireFound(tx.groups.update(next), "group", input.uid), {
        resource: "group",
        verb: "updated",
        subject: next.uid,
        group: next.uid,
        schema: GroupSchema,
        body: message,
      });
      return message;
    },

    async lookupGroup(_req, ctx) {
      const identity = await store.identities.get(principalOf(ctx).identityUid);
      const email = identity?.email ?? "";
      const domain = email.includes("@") ? email.slice(email.lastIndexOf("@") + 1).toLowerCase() : "";
      const organization = domain === "" ? undefined : await store.groups.getByName("", domain);
      // One answer for every miss: the call must not tell which part failed.
      if (!organization?.verified) throw notFound("group", "the verified organization of your email domain");
      return groupMessage(organization);
    },

    async deleteGroup(req, ctx) {
      const uid = req.uid;
      const deleteEmptyGroup = async (tx: Store) => {
        if (!(await tx.groups.get(uid))) throw notFound("group", uid);
        const idps = await tx.identityProviders.countByGroup(uid);
        // Webhooks stop only when someone deletes their subscription, never as a side effect.
        const subscriptions = await tx.subscriptions.countByGroup(uid);
        const blocking = [
          describeChildren(await tx.groups.children(uid)),
          idps > 0 ? `${idps} identity provider${idps === 1 ? "" : "s"}` : "",
          subscriptions > 0 ? `${subscriptions} subscription${subscriptions === 1 ? "" : "s"}` : "",
        ]
          .filter(Boolean)
          .join(", ");
        if (blocking) {
          throw failedPrecondition("RESOURCE_NOT_EMPTY", `group ${uid} still contains ${blocking}`, uid);
        }
        // What only makes sense with the group goes with it.
        await tx.groupInvites.deleteByGroup(uid);
        await tx.accountAssociations.delete(uid);
        await tx.termsAcceptances.deleteByGroup(uid);
        await tx.roleBindings.deleteByGroup(uid);
        await tx.groups.delete(uid);
      };
      await recordedMutation(deps, ctx, deleteEmptyGroup, {
        resource: "group",
        verb: "deleted",
        subject: uid,
        group: parentOf(uid),
        schema: DeleteGroupRequestSchema,
        body: { uid },
      });
      return {};
    },
  };
}

/** "2 repos, 1 group" for the children that block a delete, or "" when none do. */
function describeChildren(children: GroupChildren): string {
  const parts: string[] = [];
  const add = (n: number, one: string, many: string) => {
    if (n > 0) parts.push(`${n} ${n === 1 ? one : many}`);
  };
  add(children.groups, "group", "groups");
  add(children.repos, "repo", "repos");
  add(children.identities, "identity", "identities");
  add(children.roles, "role", "roles");
  return parts.join(", ");
}
