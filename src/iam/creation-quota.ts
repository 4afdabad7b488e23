import type { Store } from "../storage/store.js";

/** A group or repo about to be created under `parentUid` ("" for an organization). */
export interface NewResource {
  resource: "group" | "repo";
  parentUid: string;
}

/**
 * Called in the creating transaction, before the row is written, by every path that creates a
 * group or a repo: the API's CreateGroup and CreateRepo and a push creating folders and its repo
 * (through createGroupIn and createRepoIn). The one place where per-organization quotas will be
 * enforced (throwing to refuse); today it admits everything.
 */
export async function admitNewResource(_tx: Store, _resource: NewResource): Promise<void> {}
