import { enumNameOf, shortNameOf } from "../authz/capabilities.js";
import { restrictionsOf } from "../authz/token-restrictions.js";
import type { Principal } from "../core/context.js";
import { isAncestorOrSelf } from "../core/uidp.js";
import type { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import type { GroupRow, RoleBindingRow, RoleRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";

/** One group where the caller holds a role, and what that role lets them do there. */
export interface CallerGrant {
  group: GroupRow;
  role: RoleRow;
  /** Friendly capability names (enum names for capabilities without one), narrowed by the token's `cap`. */
  capabilities: string[];
}

/**
 * What the caller's current role bindings give them, narrowed by the token's `scope` and `cap`
 * restrictions: a binding at G shows as G when the token reaches G, or as each restricted scope
 * under G otherwise; capabilities are limited to the token's `cap`. Bindings whose group or role
 * is gone are left out.
 */
export async function callerGrants(
  store: Pick<Store, "groups" | "roleBindings" | "roles">,
  principal: Principal,
): Promise<CallerGrant[]> {
  const restrictions = restrictionsOf(principal.claims);
  const allowed = (caps: readonly number[]) =>
    caps.filter((c) => restrictions.caps === undefined || restrictions.caps.has(c as Capability));
  const bindings = (
    await store.roleBindings.list(
      { identityUid: principal.identityUid },
      { order: { field: "uid", desc: false }, limit: 1000, skip: 0 },
    )
  ).rows;
  const placements: { groupUid: string; binding: RoleBindingRow }[] = [];
  for (const b of bindings) {
    const scopes = restrictions.scopes;
    if (scopes === undefined || scopes.some((s) => isAncestorOrSelf(s, b.groupUid))) {
      placements.push({ groupUid: b.groupUid, binding: b });
    } else {
      for (const s of scopes)
        if (isAncestorOrSelf(b.groupUid, s)) placements.push({ groupUid: s, binding: b });
    }
  }
  const groups = new Map(
    (await store.groups.getMany([...new Set(placements.map((p) => p.groupUid))])).map((g) => [g.uid, g]),
  );
  const roles = new Map(
    (await store.roles.getMany([...new Set(bindings.map((b) => b.roleUid))])).map((r) => [r.uid, r]),
  );
  const out: CallerGrant[] = [];
  for (const { groupUid, binding } of placements) {
    const group = groups.get(groupUid);
    const role = roles.get(binding.roleUid);
    if (!group || !role) continue;
    out.push({
      group,
      role,
      capabilities: allowed(role.capabilities)
        .map((c) => shortNameOf(c as Capability) || enumNameOf(c as Capability))
        .filter((n) => n !== ""),
    });
  }
  return out;
}
