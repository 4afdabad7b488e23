import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { parentOf } from "../../core/uidp.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import {
  type RoleBindingList_Binding as RoleBindingListItem,
  RoleBindingList_BindingSchema as RoleBindingListItemSchema,
  RoleBindingSchema as RoleBindingV1Schema,
} from "../../gen/platform/iam/v1/role_bindings_pb.js";
import type { Role as RoleV1 } from "../../gen/platform/iam/v1/roles_pb.js";
import { RoleBindingSchema } from "../../gen/platform/iam/v2/role_bindings_pb.js";
import { groupV1Message } from "./groups-v1-mapping.js";
import { roleV1Message } from "./roles-v1-mapping.js";

/**
 * The v1 write shape of a binding: `id`, the ids of its `identity` and `role`, and `group`, the
 * parent of its id (a body's `group` is ignored, as in v1).
 */
export const ROLE_BINDING_V1 = v1Resource({
  v1: RoleBindingV1Schema,
  v2: RoleBindingSchema,
  updatable: ["identity_uid", "role_uid"],
  renames: { identity_uid: "identity", role_uid: "role" },
  v1Extras: (binding) => ({ group: parentOf(binding.uid) }),
});

export const roleBindingV1Message = ROLE_BINDING_V1.toV1;
export const roleBindingV2Input = ROLE_BINDING_V1.toV2;

/** The v1 list item of a binding, by table: `id`, `identity` and `createdAt`; the rest below. */
const LISTED_BINDING_V1 = v1Resource({
  v1: RoleBindingListItemSchema,
  v2: RoleBindingSchema,
  updatable: [],
  renames: { identity_uid: "identity" },
});

/**
 * The v1 list item of a hydrated v2 binding: its group and role as v1 messages (the role's
 * capabilities from `fullRoles` when the caller could list the role, else none), the identity's
 * email and its claimMatch issuer and subject flattened.
 */
export function roleBindingV1ListItem(
  v2: MessageInitShape<typeof RoleBindingSchema>,
  fullRoles: ReadonlyMap<string, RoleV1>,
): RoleBindingListItem {
  const binding = create(RoleBindingSchema, v2);
  const { group, role, identity } = binding;
  return Object.assign(LISTED_BINDING_V1.toV1(binding), {
    group: group && groupV1Message({ uid: group.uid, name: group.name, description: group.description }),
    role:
      role &&
      (fullRoles.get(role.uid) ??
        roleV1Message({ uid: role.uid, name: role.name, description: role.description })),
    email: identity?.email ?? "",
    claimMatchIssuer: identity?.issuer ?? "",
    claimMatchSubject: identity?.subject ?? "",
  });
}
