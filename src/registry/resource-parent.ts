import { notFound } from "../core/errors.js";
import type { Store } from "../storage/store.js";

/**
 * Throws NOT_FOUND ("group or repo") unless `uid` is a group (organization or folder) or a repo in
 * `tx`: the parents a registry policy resource (immutability rule, pull policy, signing key) may
 * hang under. Called in the create's transaction, so a parent deleted meanwhile is seen.
 */
export async function requireGroupOrRepo(tx: Pick<Store, "groups" | "repos">, uid: string): Promise<void> {
  if ((await tx.groups.get(uid)) ?? (await tx.repos.get(uid))) return;
  throw notFound("group or repo", uid);
}
