import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import { v1Crud } from "../../core/v1-face-crud.js";
import {
  type ExternalGroupRoleMappings,
  ExternalGroupRoleMappingSchema as ExternalGroupRoleMappingV1Schema,
} from "../../gen/platform/iam/v1/external_group_role_mappings_pb.js";
import {
  BatchDeleteExternalGroupRoleMappingsRequestSchema,
  ExternalGroupRoleMappingSchema,
  ExternalGroupRoleMappingsService,
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
 * ExternalGroupRoleMappings (v1): the standard v1 CRUD over the v2 ExternalGroupRoleMappingsService
 * handlers (docs/adr/0030), without PUT. The hosted v1 has a Get (`GET …/{uid}`), so a missing mapping is the v2
 * NOT_FOUND there; List gathers every v2 page.
 */
export function createExternalGroupRoleMappingsV1Service(
  v2: ServiceHandlers<typeof ExternalGroupRoleMappingsService>,
): ServiceHandlers<typeof ExternalGroupRoleMappings> {
  const face = v1Crud(ExternalGroupRoleMappingsService, v2, MAPPING_V1, "/iam/v2/externalGroupRoleMappings");
  return {
    list: (req, ctx) => face.list({ uidp: req.uidp, identityProviderUid: req.identityProviderUidp }, ctx),
    get: async (req, ctx) => MAPPING_V1.toV1(await face.get(req.uid, ctx)),
    create: (req, ctx) => face.create(req.parentId, MAPPING_V1.toV2(req.mapping ?? {}), ctx),
    delete: (req, ctx) => face.delete(req.id, ctx),

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
