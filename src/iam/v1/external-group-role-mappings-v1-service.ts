import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import {
  type ExternalGroupRoleMappings,
  ExternalGroupRoleMappingSchema as ExternalGroupRoleMappingV1Schema,
} from "../../gen/platform/iam/v1/external_group_role_mappings_pb.js";
import {
  BatchDeleteExternalGroupRoleMappingsRequestSchema,
  CreateExternalGroupRoleMappingRequestSchema,
  DeleteExternalGroupRoleMappingRequestSchema,
  ExternalGroupRoleMappingSchema,
  type ExternalGroupRoleMappingsService,
  GetExternalGroupRoleMappingRequestSchema,
  ListExternalGroupRoleMappingsRequestSchema,
} from "../../gen/platform/iam/v2/external_group_role_mappings_pb.js";

/**
 * A v1 mapping: the v2 one by table (`uid` → `id`, `identityProviderUid` → `identityProviderUidp`,
 * `roleUid` → `roleUidp`, `createTime` → `createdAt`). Never updated: a create body writes its
 * group, role and scope (its id and provider are output only, set by v2).
 */
const MAPPING_V1 = v1Resource({
  v1: ExternalGroupRoleMappingV1Schema,
  v2: ExternalGroupRoleMappingSchema,
  updatable: ["external_group_id", "role_uid", "scope"],
  renames: { identity_provider_uid: "identity_provider_uidp", role_uid: "role_uidp" },
});

/**
 * ExternalGroupRoleMappings (v1): a face over the v2 ExternalGroupRoleMappingsService handlers
 * (docs/adr/0030). The hosted v1 has a Get (`GET …/{uid}`), so a missing mapping is the v2
 * NOT_FOUND there; List gathers every v2 page.
 */
export function createExternalGroupRoleMappingsV1Service(
  v2: ServiceHandlers<typeof ExternalGroupRoleMappingsService>,
): ServiceHandlers<typeof ExternalGroupRoleMappings> {
  return {
    async list(req, ctx) {
      const mappings = await everyV2Item(
        "/iam/v2/externalGroupRoleMappings",
        (paging) =>
          v2.listExternalGroupRoleMappings(
            create(ListExternalGroupRoleMappingsRequestSchema, {
              uidp: req.uidp,
              identityProviderUid: req.identityProviderUidp,
              ...paging,
            }),
            ctx,
          ),
        (page) => page.externalGroupRoleMappings,
      );
      return { items: mappings.map(MAPPING_V1.toV1) };
    },

    async get(req, ctx) {
      const get = create(GetExternalGroupRoleMappingRequestSchema, { uid: req.uid });
      return MAPPING_V1.toV1(await v2.getExternalGroupRoleMapping(get, ctx));
    },

    async create(req, ctx) {
      const request = create(CreateExternalGroupRoleMappingRequestSchema, {
        parent: req.parentId,
        mapping: MAPPING_V1.toV2(req.mapping ?? {}),
      });
      return MAPPING_V1.toV1(await v2.createExternalGroupRoleMapping(request, ctx));
    },

    async delete(req, ctx) {
      await v2.deleteExternalGroupRoleMapping(
        create(DeleteExternalGroupRoleMappingRequestSchema, { uid: req.id }),
        ctx,
      );
      return {};
    },

    async batchDelete(req, ctx) {
      const request = create(BatchDeleteExternalGroupRoleMappingsRequestSchema, {
        parent: req.parentId,
        names: req.ids,
      });
      const answer = await v2.batchDeleteExternalGroupRoleMappings(request, ctx);
      return {
        parentId: answer.parent ?? req.parentId,
        items: (answer.externalGroupRoleMappings ?? []).map(MAPPING_V1.toV1),
      };
    },
  };
}
