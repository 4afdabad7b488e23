import { create, type MessageInitShape } from "@bufbuild/protobuf";
import {
  type GroupInvite as GroupInviteV1,
  GroupInviteSchema as GroupInviteV1Schema,
} from "../../gen/platform/iam/v1/group_invites_pb.js";
import {
  type GroupInvite_InvitedRole,
  GroupInviteSchema,
} from "../../gen/platform/iam/v2/group_invites_pb.js";
import { roleV1Message } from "./roles-v1-mapping.js";

/**
 * The v1 shape of an invite a v2 handler answered: `uid` → `id`, `expirationTime` → `expiration`,
 * `createTime` → `createdAt`, the hydrated role as a v1 Role (friendly capability names), and the
 * code only when the v2 answer has one (the create answer).
 */
export function groupInviteV1Message(answer: MessageInitShape<typeof GroupInviteSchema>): GroupInviteV1 {
  const v2 = create(GroupInviteSchema, answer);
  return create(GroupInviteV1Schema, {
    id: v2.uid,
    expiration: v2.expirationTime,
    keyId: v2.keyId,
    role: v2.role && roleV1Message(invitedRoleFields(v2.role)),
    code: v2.code,
    email: v2.email,
    createdAt: v2.createTime,
    singleUse: v2.singleUse,
  });
}

/** The fields a hydrated invite role shares with a Role. */
function invitedRoleFields(role: GroupInvite_InvitedRole) {
  return { uid: role.uid, name: role.name, description: role.description, capabilities: role.capabilities };
}
