import { isUidp } from "../core/uidp.js";
import type { Grant } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";

/**
 * Claim of a login token listing the external group role mappings that applied when the person
 * logged in (uids). The grants are session-scoped: they are not role bindings, and they last only
 * as long as the token (≤ 1 h, no refresh token). A mapping deleted since grants nothing.
 */
export const SESSION_GRANTS_CLAIM = "egm";

/** Most mapping uids read from one token (a provider could put thousands of groups in a claim). */
const MAX_SESSION_GRANTS = 100;

/** The mapping uids of a token's claims, sorted and deduplicated; [] when absent or malformed. */
export function sessionGrantUids(claims: Readonly<Record<string, unknown>>): string[] {
  const value = claims[SESSION_GRANTS_CLAIM];
  if (!Array.isArray(value)) return [];
  const uids = value.filter((v): v is string => typeof v === "string" && isUidp(v));
  return [...new Set(uids)].sort().slice(0, MAX_SESSION_GRANTS);
}

/**
 * The grants of mappings `uids` as they are NOW: each existing mapping's role capabilities at the
 * mapping's scope. Mappings or roles deleted since the login are skipped.
 */
export async function resolveSessionGrants(
  store: Pick<Store, "externalGroupRoleMappings" | "roles">,
  uids: readonly string[],
): Promise<Grant[]> {
  const grants: Grant[] = [];
  for (const uid of uids) {
    const mapping = await store.externalGroupRoleMappings.get(uid);
    if (!mapping) continue;
    const role = await store.roles.get(mapping.roleUid);
    if (!role) continue;
    grants.push({ groupUid: mapping.scope, roleUid: role.uid, capabilities: role.capabilities });
  }
  return grants;
}
