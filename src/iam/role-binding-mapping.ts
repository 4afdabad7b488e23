import { create } from "@bufbuild/protobuf";
import { toTimestamp } from "../core/api-convert.js";
import { type RoleBinding, RoleBindingSchema } from "../gen/platform/iam/v2/role_bindings_pb.js";
import type { GroupRow, IdentityRow, RoleBindingRow, RoleRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";

/** The rows a role binding response is hydrated from. */
export interface BindingParts {
  identities: Map<string, IdentityRow>;
  groups: Map<string, GroupRow>;
  roles: Map<string, RoleRow>;
}

/** Loads every identity, group and role the bindings refer to, one query per kind. */
export async function loadBindingParts(
  store: Pick<Store, "groups" | "identities" | "roles">,
  rows: readonly RoleBindingRow[],
): Promise<BindingParts> {
  const unique = (pick: (r: RoleBindingRow) => string) => [...new Set(rows.map(pick))];
  const [identities, groups, roles] = await Promise.all([
    store.identities.getMany(unique((r) => r.identityUid)),
    store.groups.getMany(unique((r) => r.groupUid)),
    store.roles.getMany(unique((r) => r.roleUid)),
  ]);
  return {
    identities: new Map(identities.map((r) => [r.uid, r])),
    groups: new Map(groups.map((r) => [r.uid, r])),
    roles: new Map(roles.map((r) => [r.uid, r])),
  };
}

/** The API message of a binding, hydrated with its identity, group and role. */
export function roleBindingMessage(row: RoleBindingRow, parts: BindingParts): RoleBinding {
  const identity = parts.identities.get(row.identityUid);
  const group = parts.groups.get(row.groupUid);
  const role = parts.roles.get(row.roleUid);
  const { issuer, subject } = issuerAndSubject(identity);
  return create(RoleBindingSchema, {
    uid: row.uid,
    identityUid: row.identityUid,
    roleUid: row.roleUid,
    identity: identity && {
      uid: identity.uid,
      name: identity.name,
      description: identity.description,
      issuer,
      subject,
      email: identity.email,
    },
    group: group && { uid: group.uid, name: group.name, description: group.description },
    role: role && { uid: role.uid, name: role.name, description: role.description },
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
  });
}

function issuerAndSubject(identity: IdentityRow | undefined): { issuer: string; subject: string } {
  if (identity?.claimMatch) {
    const m = identity.claimMatch;
    return { issuer: m.issuer ?? m.issuerPattern ?? "", subject: m.subject ?? m.subjectPattern ?? "" };
  }
  if (identity?.staticKeys)
    return { issuer: identity.staticKeys.issuer, subject: identity.staticKeys.subject };
  return { issuer: "", subject: "" };
}
