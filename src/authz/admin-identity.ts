import { Code } from "@connectrpc/connect";
import { isDomainError } from "../core/errors.js";
import { deterministicRootUid } from "../core/uidp.js";
import type { Store } from "../storage/store.js";

/**
 * Uid of the built-in platform administrator (sha1 hex of `wharf:identity:admin`): the same on every
 * install. A token whose `sub` is this uid holds every capability everywhere.
 */
export const ADMIN_IDENTITY_UID = deterministicRootUid("wharf:identity:admin");

/**
 * Creates the administrator's root identity row (name `admin`, description
 * "Platform administrator (built-in)") unless it exists. Race-safe across processes: losing the
 * insert race (ALREADY_EXISTS) counts as success. An existing row is never modified.
 */
export async function ensureAdminIdentity(store: Store, now: number): Promise<void> {
  if (await store.identities.get(ADMIN_IDENTITY_UID)) return;
  try {
    await store.identities.insert({
      uid: ADMIN_IDENTITY_UID,
      name: "admin",
      description: "Platform administrator (built-in)",
      email: "",
      createTime: now,
      updateTime: now,
    });
  } catch (err) {
    if (isDomainError(err) && err.code === Code.AlreadyExists) return;
    throw err;
  }
}
