import { invalidArgument } from "../core/errors.js";
import { isAncestorOrSelf, isUidp, parentOf, requireUidp } from "../core/uidp.js";
import { validateName } from "../core/validation.js";
import type { RoleRow } from "../storage/iam-store.js";
import type { Store } from "../storage/store.js";

/** Shortest name of identity providers (and other resources whose proto says 3–63 characters). */
export const MIN_NAME_LENGTH = 3;

/** A name of 3 to 63 characters of the usual pattern; INVALID_ARGUMENT naming `field` otherwise. */
export function validateLongName(value: string, field = "name"): void {
  validateName(value, field);
  if (value.length < MIN_NAME_LENGTH) {
    throw invalidArgument(field, `${field} must be at least ${MIN_NAME_LENGTH} characters`);
  }
}

/** True when `role` may be used at `groupUid`: built-in, or defined at the group or an ancestor. */
export function roleVisibleAt(role: RoleRow, groupUid: string): boolean {
  return role.builtIn || (isUidp(role.uid) && isAncestorOrSelf(parentOf(role.uid), groupUid));
}

/**
 * The role `roleUid`, which must exist and be visible at `groupUid` (built-in, or a custom role of
 * the group or an ancestor); INVALID_ARGUMENT naming `field` otherwise (empty: "is required").
 */
export async function visibleRole(
  store: Pick<Store, "roles">,
  roleUid: string,
  groupUid: string,
  field: string,
): Promise<RoleRow> {
  requireUidp(field, roleUid);
  const role = await store.roles.get(roleUid);
  if (!role) throw invalidArgument(field, `role ${roleUid} does not exist`);
  if (!roleVisibleAt(role, groupUid)) {
    throw invalidArgument(
      field,
      `role ${roleUid} is defined in another group; only built-in roles and roles of ${groupUid} or its ancestors can be used here`,
    );
  }
  return role;
}

/** True for a loopback host name or address (where plain http is acceptable). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "::1" ||
    /^127(?:\.\d{1,3}){3}$/.test(host)
  );
}
