import { create } from "@bufbuild/protobuf";
import { enumNameOf } from "../authz/capabilities.js";
import { pageRequestOf, toTimestamp, toUidpFilter } from "../core/api-convert.js";
import { invalidArgument, notFound, permissionDenied, requireFound } from "../core/errors.js";
import { type ListSpec, paginate } from "../core/list.js";
import { pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { isUidp, newChildUid, parentOf, requireUidp, rootOf } from "../core/uidp.js";
import { recordedMutation } from "../events/recorded-mutation.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import {
  BatchDeleteExternalGroupRoleMappingsResponseSchema,
  DeleteExternalGroupRoleMappingRequestSchema,
  type ExternalGroupRoleMapping,
  ExternalGroupRoleMappingSchema,
  type ExternalGroupRoleMappingsService,
} from "../gen/platform/iam/v2/external_group_role_mappings_pb.js";
import type { ExternalGroupRoleMappingFilter, ExternalGroupRoleMappingRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";
import { visibleRole } from "./resource-rules.js";
import type { IamServiceDeps } from "./service-deps.js";

/** Most mappings one batchDelete may name. */
export const MAX_BATCH_DELETE = 100;

const MAPPING_LIST: ListSpec<ExternalGroupRoleMappingRow> = {
  allowedOrder: ["uid", "create_time", "update_time"],
  defaultOrder: { field: "uid", desc: false },
  sortValue: (row, field) => (field === "uid" ? row.uid : row.createTime),
  uidOf: (row) => row.uid,
};

/**
 * ExternalGroupRoleMappingsService: a group of an identity provider's groups claim → a role at the
 * provider's organization, for the sessions of people in that group. Immutable; the caller must
 * already hold every capability of the mapped role (no escalation through a mapping). Changes are
 * events of the provider (the mappings' parent); a batch delete is one `deleted.batch` event.
 */
export function createExternalGroupRoleMappingsService(
  deps: IamServiceDeps,
): ServiceHandlers<typeof ExternalGroupRoleMappingsService> {
  const { store } = deps;
  return {
    async listExternalGroupRoleMappings(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_IAM_IDENTITY_PROVIDERS_LIST]);
      const filter: ExternalGroupRoleMappingFilter = { uidp: toUidpFilter(req.uidp) };
      if (req.identityProviderUid) {
        filter.identityProviderUid = requireUidp("identity_provider_uid", req.identityProviderUid);
      }
      if (req.externalGroupId) filter.externalGroupId = req.externalGroupId;
      if (req.roleUid) filter.roleUid = requireUidp("role_uid", req.roleUid);
      const page = await paginate(pageRequestOf(req), filter, MAPPING_LIST, deps.pageTokens, (window) =>
        store.externalGroupRoleMappings.list({ ...filter, within }, window),
      );
      return { externalGroupRoleMappings: page.items.map(mappingMessage), ...pageEnvelope(page) };
    },

    async getExternalGroupRoleMapping(req) {
      const row = await store.externalGroupRoleMappings.get(req.uid);
      if (!row) throw notFound("external_group_role_mapping", req.uid);
      return mappingMessage(row);
    },

    async createExternalGroupRoleMapping(req, ctx) {
      const input = req.mapping;
      const externalGroupId = input?.externalGroupId ?? "";
      if (externalGroupId === "") throw invalidArgument("external_group_id", "is required");
      if (externalGroupId.length > 256 || /[\p{Cc}]/u.test(externalGroupId)) {
        throw invalidArgument(
          "external_group_id",
          "must be at most 256 characters, without control characters",
        );
      }
      const idp = await store.identityProviders.get(req.parent);
      if (!idp) throw notFound("identity_provider", req.parent);
      const org = rootOf(idp.uid);
      const scope = input?.scope || org;
      if (scope !== org) {
        throw invalidArgument("scope", `must be the identity provider's organization ${org}`);
      }
      const role = await visibleRole(store, input?.roleUid ?? "", scope, "role_uid");
      if (!(await ctx.access.has(scope, role.capabilities))) {
        const names = role.capabilities.map(enumNameOf).join(", ");
        throw permissionDenied(
          `mapping role ${role.uid} requires holding all of its capabilities at ${scope} (${names})`,
        );
      }
      const row: ExternalGroupRoleMappingRow = {
        uid: newChildUid(idp.uid),
        identityProviderUid: idp.uid,
        externalGroupId,
        roleUid: role.uid,
        scope,
        createTime: ctx.clock.now(),
      };
      const message = mappingMessage(row);
      await recordedMutation(deps, ctx, (tx) => tx.externalGroupRoleMappings.insert(row), {
        resource: "externalGroupRoleMapping",
        verb: "created",
        subject: row.uid,
        group: row.identityProviderUid,
        schema: ExternalGroupRoleMappingSchema,
        body: message,
      });
      return message;
    },

    async deleteExternalGroupRoleMapping(req, ctx) {
      await recordedMutation(
        deps,
        ctx,
        (tx) =>
          requireFound(tx.externalGroupRoleMappings.delete(req.uid), "external_group_role_mapping", req.uid),
        {
          resource: "externalGroupRoleMapping",
          verb: "deleted",
          subject: req.uid,
          group: parentOf(req.uid),
          schema: DeleteExternalGroupRoleMappingRequestSchema,
          body: { uid: req.uid },
        },
      );
      return {};
    },

    async batchDeleteExternalGroupRoleMappings(req, ctx) {
      if (req.names.length === 0) throw invalidArgument("names", "at least one mapping uid is required");
      if (req.names.length > MAX_BATCH_DELETE) {
        throw invalidArgument("names", `at most ${MAX_BATCH_DELETE} per batch`);
      }
      for (const [i, name] of req.names.entries()) {
        if (!isUidp(name) || parentOf(name) !== req.parent) {
          throw invalidArgument(
            `names[${i}]`,
            `"${name}" is not a mapping of identity provider ${req.parent}`,
          );
        }
      }
      const deleteFound = async (tx: Store) => {
        const out: ExternalGroupRoleMappingRow[] = [];
        for (const name of new Set(req.names)) {
          const row = await tx.externalGroupRoleMappings.get(name);
          if (row && (await tx.externalGroupRoleMappings.delete(name))) out.push(row);
        }
        return create(BatchDeleteExternalGroupRoleMappingsResponseSchema, {
          parent: req.parent,
          externalGroupRoleMappings: out.map(mappingMessage),
        });
      };
      // The body is the response (what was actually deleted), not the request's names; a batch
      // that found nothing to delete changed nothing and reports nothing.
      return recordedMutation(deps, ctx, deleteFound, (response) =>
        response.externalGroupRoleMappings.length > 0
          ? {
              resource: "externalGroupRoleMapping",
              verb: "deleted.batch",
              subject: req.parent,
              group: req.parent,
              schema: BatchDeleteExternalGroupRoleMappingsResponseSchema,
              body: response,
            }
          : undefined,
      );
    },
  };
}

/** The API message of a stored mapping. */
function mappingMessage(row: ExternalGroupRoleMappingRow): ExternalGroupRoleMapping {
  return create(ExternalGroupRoleMappingSchema, {
    uid: row.uid,
    identityProviderUid: row.identityProviderUid,
    externalGroupId: row.externalGroupId,
    roleUid: row.roleUid,
    scope: row.scope,
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.createTime),
  });
}
