import { failedPrecondition } from "../core/errors.js";
import { rootOf } from "../core/uidp.js";
import type { Store } from "../storage/store.js";

/** The PreconditionFailure type of a create refused by a quota. */
export const QUOTA_EXCEEDED = "QUOTA_EXCEEDED";

/** A group or repo about to be created under `parentUid` ("" for an organization). */
export interface NewResource {
  resource: "group" | "repo";
  parentUid: string;
}

/**
 * Called in the creating transaction, before the row is written, by every path that creates a
 * group or a repo: the API's CreateGroup and CreateRepo and a push creating folders and its repo
 * (through createGroupIn and createRepoIn). The one place where per-organization quotas are
 * enforced: a repo past its organization's `repoCount` quota is FAILED_PRECONDITION, reason
 * `QUOTA_EXCEEDED` (the registry answers a push with 403 DENIED). Organizations without a repo
 * quota cost one indexed read; with one, creates in the organization take its usage row's lock
 * (PostgreSQL), so two concurrent creates cannot both take the last place.
 */
export async function admitNewResource(tx: Store, resource: NewResource): Promise<void> {
  if (resource.resource !== "repo") return;
  const orgUid = rootOf(resource.parentUid);
  const row = await tx.usage.get(orgUid);
  if (!row || row.quotaRepoCount === 0) return;
  const limit = (await tx.usage.get(orgUid, { forUpdate: true }))?.quotaRepoCount ?? row.quotaRepoCount;
  const count = await tx.usage.repoCount(orgUid);
  if (limit === 0 || count < limit) return;
  const org = await tx.groups.get(orgUid);
  throw failedPrecondition(
    QUOTA_EXCEEDED,
    `quota exceeded: ${org?.name ?? orgUid} has ${count} of ${limit} repos`,
    orgUid,
  );
}
