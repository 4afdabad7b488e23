import { failedPrecondition } from "../../core/errors.js";
import { rootOf, selfAndAncestors } from "../../core/uidp.js";
import type { Store } from "../../storage/store.js";

/**
 * FAILED_PRECONDITION, reason UPSTREAM_NAMESPACE, when a repo created through the API in group
 * `groupUid` would land in an upstream's namespace (`<org>/<upstream>/…`, the group `<upstream>`
 * below the organization or any group below it): that namespace holds what the pull-through
 * cache fetched, and only the cache creates repos there (ADR 0051).
 */
export async function refuseRepoInUpstreamNamespace(
  store: Pick<Store, "groups" | "upstreams">,
  groupUid: string,
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
    `${group.name} is the pull-through cache namespace of upstream ${upstream.name}: repos there are created by the cache only`,
    upstream.uid,
  );
}
