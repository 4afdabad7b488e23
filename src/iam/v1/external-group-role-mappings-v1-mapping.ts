import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type ExternalGroupRoleMapping as MappingV1,
  ExternalGroupRoleMappingSchema as MappingV1Schema,
} from "../../gen/platform/iam/v1/external_group_role_mappings_pb.js";
import {
  type ExternalGroupRoleMapping,
  ExternalGroupRoleMappingSchema,
} from "../../gen/platform/iam/v2/external_group_role_mappings_pb.js";

/**
 * The v1 shape of a mapping a v2 handler answered: `uid` → `id`, `identityProviderUid` →
 * `identityProviderUidp`, `roleUid` → `roleUidp`, `createTime` → `createdAt`.
 */
export function externalGroupRoleMappingV1Message(
  answer: MessageInitShape<typeof ExternalGroupRoleMappingSchema>,
): MappingV1 {
  const v2 = create(ExternalGroupRoleMappingSchema, answer);
  return create(MappingV1Schema, {
    id: v2.uid,
    identityProviderUidp: v2.identityProviderUid,
    externalGroupId: v2.externalGroupId,
    roleUidp: v2.roleUid,
    scope: v2.scope,
    createdAt: v2.createTime,
  });
}

/** The v2 mapping a v1 create body describes (its id and provider are output only). */
export function externalGroupRoleMappingV2Input(v1: MappingV1 | undefined): ExternalGroupRoleMapping {
  return create(ExternalGroupRoleMappingSchema, {
    externalGroupId: v1?.externalGroupId ?? "",
    roleUid: v1?.roleUidp ?? "",
    scope: v1?.scope ?? "",
  });
}
