import { failedPrecondition } from "../../core/errors.js";
import { rootOf, selfAndAncestors } from "../../core/uidp.js";
import type { Store } from "../../storage/store.js";

/**
 * FAILED_PRECONDITION, reason UPSTREAM_NAMESPACE, when an API write in group `groupUid` (a repo
 * created there, a tag of one of its repos set or restored) would land in an upstream's namespace
 * (`<org>/<upstream>/…`: the group `<upstream>` below the organization or any group below it).
 * That namespace holds what the pull-through cache fetched, and only the cache writes there (ADR
 * 0051). `what` ends the message: "repos there are created by the cache only".
 */
export async function refuseWriteInUpstreamNamespace(
  store: Pick<Store, "groups" | "upstreams">,
  groupUid: string,
  what: string,
): Promise<void> {
  // The first group below the organization names the namespace; a repo right in the organization is in none.
  const first = selfAndAncestors(groupUid)[1];
  if (first === undefined) return;
  const group = await store.groups.get(first);
  if (!group) return;
  const upstream = await store.upstreams.getByName(rootOf(groupUid), group.name);
  if (!upstream) return;
  throw failedPrecondition(
    "UPSTREAM_NAMESPACE",
    `${group.name} is the pull-through cache namespace of upstream ${upstream.name}: ${what}`,
    upstream.uid,
  );
}
