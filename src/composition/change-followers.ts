import type { SigningKeyRing } from "../auth/signing-keys.js";
import type { RevocationWatch } from "../auth/token-revocations.js";
import type { AccessResolver } from "../authz/access.js";
import type { RepoResolver } from "../registry/data-plane/repo-resolver.js";
import { type ChangeFeed, touches } from "../storage/change-feed.js";

/** Tables whose rows decide an identity's grants (role bindings, their roles, session mappings). */
export const GRANT_TABLES = [
  "role_bindings",
  "roles",
  "groups",
  "identities",
  "external_group_role_mappings",
  "identity_providers",
] as const;

/** Tables whose rows decide what an image path resolves to. */
export const NAME_TABLES = ["groups", "repos"] as const;

/**
 * Subscribes this process's caches to the store's change feed, so a change committed anywhere
 * (another replica, `wharf admin`) drops what it touches: grants (all identities: role changes are
 * rare and a role binding change may concern a group's members), repo name resolutions, the loaded
 * signing keys, and the revocation list (re-read at once). Their TTLs remain as the safety net
 * for a lost notification. The list-total cache subscribes in the store itself (openStore).
 */
export function followChanges(
  changes: ChangeFeed,
  caches: {
    access: AccessResolver;
    resolver: Pick<RepoResolver, "forget">;
    keys: Pick<SigningKeyRing, "forget">;
    revocations: Pick<RevocationWatch, "refreshFromNow">;
    onError: (err: unknown) => void;
  },
): () => void {
  return changes.subscribe((batch) => {
    if (touches(batch, GRANT_TABLES)) caches.access.invalidate();
    if (touches(batch, NAME_TABLES)) caches.resolver.forget();
    if (touches(batch, ["signing_keys"])) caches.keys.forget();
    if (touches(batch, ["token_revocations"])) caches.revocations.refreshFromNow().catch(caches.onError);
  });
}
