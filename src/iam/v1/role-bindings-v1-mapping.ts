import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { parentOf } from "../../core/uidp.js";
import {
  type RoleBindingList_Binding as RoleBindingListItem,
  RoleBindingList_BindingSchema as RoleBindingListItemSchema,
  type RoleBinding as RoleBindingV1,
  RoleBindingSchema as RoleBindingV1Schema,
} from "../../gen/platform/iam/v1/role_bindings_pb.js";
import type { Role as RoleV1 } from "../../gen/platform/iam/v1/roles_pb.js";
import { RoleBindingSchema } from "../../gen/platform/iam/v2/role_bindings_pb.js";
import { groupV1Message } from "./groups-v1-mapping.js";
import { roleV1Message } from "./roles-v1-mapping.js";

/**
 * The v1 write shape of a binding a v2 handler answered: `id`, the ids of its `identity` and
 * `role`, and `group`, the parent of its id.
 */
export function roleBindingV1Message(v2: MessageInitShape<typeof RoleBindingSchema>): RoleBindingV1 {
  const binding = create(RoleBindingSchema, v2);
  return create(RoleBindingV1Schema, {
    id: binding.uid,
    identity: binding.identityUid,
    role: binding.roleUid,
    group: parentOf(binding.uid),
  });
}

/** The v2 binding a v1 body writes: its id, identity and role (`group` is ignored, as in v1). */
export function roleBindingV2Input(v1: RoleBindingV1): MessageInitShape<typeof RoleBindingSchema> {
  return { uid: v1.id, identityUid: v1.identity, roleUid: v1.role };
}

/**
 * The v1 list item of a hydrated v2 binding: its group and role as v1 messages (the role's
 * capabilities from `fullRoles` when the caller could list the role, else none), the identity's
 * email and its claimMatch issuer and subject flattened, `createTime` → `createdAt`.
 */
export function roleBindingV1ListItem(
  v2: MessageInitShape<typeof RoleBindingSchema>,
  fullRoles: ReadonlyMap<string, RoleV1>,
): RoleBindingListItem {
  const binding = create(RoleBindingSchema, v2);
  const { group, role, identity } = binding;
  return create(RoleBindingListItemSchema, {
    id: binding.uid,
    identity: binding.identityUid,
    ...(group
      ? { group: groupV1Message({ uid: group.uid, name: group.name, description: group.description }) }
      : {}),
    ...(role
      ? {
          role:
            fullRoles.get(role.uid) ??
            roleV1Message({ uid: role.uid, name: role.name, description: role.description }),
        }
      : {}),
    email: identity?.email ?? "",
    claimMatchIssuer: identity?.issuer ?? "",
    claimMatchSubject: identity?.subject ?? "",
    createdAt: binding.createTime,
  });
}
