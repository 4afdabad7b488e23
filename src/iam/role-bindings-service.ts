import { create } from "@bufbuild/protobuf";
import { pageRequestOf, toUidpFilter } from "../core/api-convert.js";
import { invalidArgument, notFound } from "../core/errors.js";
import { resolveUpdateMask } from "../core/field-mask.js";
import { type ListSpec, paginate } from "../core/list.js";
import { pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { isAncestorOrSelf, isRoot, isUidp, newChildUid, parentOf, requireUidp } from "../core/uidp.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import {
  BatchCreateRoleBindingsResponseSchema,
  DeleteRoleBindingRequestSchema,
  RoleBindingSchema,
  type RoleBindingsService,
} from "../gen/platform/iam/v2/role_bindings_pb.js";
import type { RoleBindingFilter, RoleBindingRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";
import { loadBindingParts, roleBindingMessage } from "./role-binding-mapping.js";
import type { IamServiceDeps } from "./service-deps.js";

/** Most bindings one batchCreate may carry. */
export const MAX_BATCH_BINDINGS = 25;

const BINDING_LIST: ListSpec<RoleBindingRow> = {
  allowedOrder: ["uid", "create_time", "update_time"],
  defaultOrder: { field: "uid", desc: false },
  sortValue: (row, field) =>
    field === "create_time" ? row.createTime : field === "update_time" ? row.updateTime : row.uid,
  uidOf: (row) => row.uid,
};

const BINDING_MASK = {
  known: ["uid", "identity_uid", "role_uid", "identity", "group", "role", "create_time"],
  updatable: ["identity_uid", "role_uid"],
} as const;

/**
 * RoleBindingsService: bind identities to roles at groups; responses are hydrated. Every change is
 * an event of the binding's group (a batch create is one `created.batch` event of the batch parent).
 */
export function createRoleBindingsService(deps: IamServiceDeps): ServiceHandlers<typeof RoleBindingsService> {
  const { store } = deps;

  /** Hydrated messages, read through `from` (the transaction when called inside one). */
  async function hydrate(
    rows: RoleBindingRow[],
    from: Pick<Store, "groups" | "identities" | "roles"> = store,
  ) {
    const parts = await loadBindingParts(from, rows);
    return rows.map((row) => roleBindingMessage(row, parts));
  }

  return {
    async listRoleBindings(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_IAM_ROLE_BINDINGS_LIST]);
      const filter: RoleBindingFilter = { uidp: toUidpFilter(req.uidp) };
      if (req.identity) filter.identityUid = requireUidp("identity", req.identity);
      if (req.group) filter.groupUid = requireUidp("group", req.group);
      if (req.role) filter.roleUid = requireUidp("role", req.role);
      const page = await paginate(pageRequestOf(req), filter, BINDING_LIST, deps.pageTokens, (window) =>
        store.roleBindings.list({ ...filter, within }, window),
      );
      return {
        roleBindings: await hydrate(page.items),
        ...pageEnvelope(page),
      };
    },

    async getRoleBinding(req) {
      const row = await store.roleBindings.get(req.uid);
      if (!row) throw notFound("role_binding", req.uid);
      return (await hydrate([row]))[0]!;
    },

    async createRoleBinding(req, ctx) {
      const input = req.roleBinding;
      const now = ctx.clock.now();
      const insertBinding = async (tx: Store) => {
        const row = await checkedBinding(tx, req.parent, input?.identityUid ?? "", input?.roleUid ?? "", "");
        const stored: RoleBindingRow = {
          ...row,
          uid: newChildUid(req.parent),
          createTime: now,
          updateTime: now,
        };
        await tx.roleBindings.insert(stored);
        return { row: stored, message: (await hydrate([stored], tx))[0]! };
      };
      const { row, message } = await recordedMutation(deps, ctx, insertBinding, ({ row, message }) => ({
        resource: "roleBinding",
        verb: "created",
        subject: row.uid,
        group: row.groupUid,
        schema: RoleBindingSchema,
        body: message,
      }));
      deps.bindingsChanged(row.identityUid);
      return message;
    },

    async batchCreateRoleBindings(req, ctx) {
      if (req.requests.length === 0) throw invalidArgument("requests", "at least one request is required");
      if (req.requests.length > MAX_BATCH_BINDINGS) {
        throw invalidArgument("requests", `at most ${MAX_BATCH_BINDINGS} requests per batch`);
      }
      const now = ctx.clock.now();
      const insertBindings = async (tx: Store) => {
        const out: RoleBindingRow[] = [];
        for (const [i, sub] of req.requests.entries()) {
          const field = `requests[${i}]`;
          if (sub.parent !== "" && sub.parent !== req.parent) {
            throw invalidArgument(`${field}.parent`, "must be empty or equal to the batch parent");
          }
          const subRole = sub.roleBinding?.roleUid ?? "";
          if (subRole !== "" && req.roleUid !== "" && subRole !== req.roleUid) {
            throw invalidArgument(`${field}.role_binding.role_uid`, "conflicts with the batch role_uid");
          }
          const roleUid = subRole || req.roleUid;
          const row = await checkedBinding(
            tx,
            req.parent,
            sub.roleBinding?.identityUid ?? "",
            roleUid,
            `${field}.role_binding.`,
          );
          const stored: RoleBindingRow = {
            ...row,
            uid: newChildUid(req.parent),
            createTime: now,
            updateTime: now,
          };
          await tx.roleBindings.insert(stored);
          out.push(stored);
        }
        const response = create(BatchCreateRoleBindingsResponseSchema, {
          roleBindings: await hydrate(out, tx),
        });
        return { rows: out, response };
      };
      const { rows, response } = await recordedMutation(deps, ctx, insertBindings, ({ response }) => ({
        resource: "roleBinding",
        verb: "created.batch",
        subject: req.parent,
        group: req.parent,
        schema: BatchCreateRoleBindingsResponseSchema,
        body: response,
      }));
      for (const row of rows) deps.bindingsChanged(row.identityUid);
      return response;
    },

    async updateRoleBinding(req, ctx) {
      const input = req.roleBinding;
      if (!input) throw invalidArgument("role_binding", "is required");
      const fields = resolveUpdateMask(BINDING_MASK, req.updateMask?.paths ?? [], () =>
        [input.identityUid !== "" ? "identity_uid" : "", input.roleUid !== "" ? "role_uid" : ""].filter(
          Boolean,
        ),
      );
      const updateBinding = async (tx: Store) => {
        const before = await tx.roleBindings.get(input.uid);
        if (!before) throw notFound("role_binding", input.uid);
        const identityUid = fields.includes("identity_uid") ? input.identityUid : before.identityUid;
        const roleUid = fields.includes("role_uid") ? input.roleUid : before.roleUid;
        await checkedBinding(tx, before.groupUid, identityUid, roleUid, "");
        const after: RoleBindingRow = { ...before, identityUid, roleUid, updateTime: ctx.clock.now() };
        await tx.roleBindings.update(after);
        return { before, after, message: (await hydrate([after], tx))[0]! };
      };
      const { before, after, message } = await recordedMutation(
        deps,
        ctx,
        updateBinding,
        ({ after, message }) => ({
          resource: "roleBinding",
          verb: "updated",
          subject: after.uid,
          group: after.groupUid,
          schema: RoleBindingSchema,
          body: message,
        }),
      );
      deps.bindingsChanged(before.identityUid);
      deps.bindingsChanged(after.identityUid);
      return message;
    },

    async deleteRoleBinding(req, ctx) {
      // Idempotent: deleting a binding that does not exist succeeds, changes nothing, reports nothing.
      const deleteBinding = async (tx: Store) => {
        const row = await tx.roleBindings.get(req.uid);
        return row && (await tx.roleBindings.delete(req.uid)) ? row : undefined;
      };
      const deleted = await recordedMutation(deps, ctx, deleteBinding, (row) =>
        row
          ? {
              resource: "roleBinding",
              verb: "deleted",
              subject: row.uid,
              group: row.groupUid,
              schema: DeleteRoleBindingRequestSchema,
              body: { uid: req.uid },
            }
          : undefined,
      );
      if (deleted) deps.bindingsChanged(deleted.identityUid);
      return {};
    },
  };
}

/**
 * Validates one binding at `groupUid` (call it in the transaction that writes the binding: it keeps
 * the identity from being deleted until then): the group, identity and role exist; the identity is a
 * registered (root) identity or lives in the group or an ancestor of it; the role is built-in or
 * defined in the group or an ancestor. `prefix` qualifies field names in errors (batch requests).
 */
async function checkedBinding(
  tx: Store,
  groupUid: string,
  identityUid: string,
  roleUid: string,
  prefix: string,
): Promise<Pick<RoleBindingRow, "groupUid" | "identityUid" | "roleUid">> {
  requireUidp(`${prefix}identity_uid`, identityUid);
  requireUidp(`${prefix}role_uid`, roleUid);
  if (!(await tx.groups.get(groupUid))) throw notFound("group", groupUid);
  // Locked until the binding commits: a concurrent identity delete waits and then sees it.
  const identity = await tx.identities.lockForReference(identityUid);
  if (!identity) throw notFound("identity", identityUid);
  if (!isRoot(identityUid) && !isAncestorOrSelf(parentOf(identityUid), groupUid)) {
    throw invalidArgument(
      `${prefix}identity_uid`,
      "the identity belongs to another group; it can only be bound in its own group or below",
    );
  }
  const role = await tx.roles.get(roleUid);
  if (!role) throw notFound("role", roleUid);
  if (!role.builtIn && !(isUidp(roleUid) && isAncestorOrSelf(parentOf(roleUid), groupUid))) {
    throw invalidArgument(
      `${prefix}role_uid`,
      "the role is defined in another group; it can only be bound there or below",
    );
  }
  return { groupUid, identityUid, roleUid };
}
