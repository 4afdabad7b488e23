import type { Principal } from "../core/context.js";
import { pushEvent } from "../events/registry-events.js";
import type { ResolvedName } from "../registry/data-plane/repo-resolver.js";
import type { CachedPull } from "../registry/pull-through/pull-through.js";
import { quotaEventSink } from "../registry/quotas/storage-quota.js";
import type { Exchange, RegistryDeps } from "./registry-request.js";

/**
 * The cache's view of an authorized pull of `name`, or undefined when `name` is not in an
 * upstream's namespace (or no cache is configured). Content the cache records on this pull is
 * attributed to the pulling caller: the repo and folders created, the push events (with this
 * request's client facts), the quota events.
 */
export async function cachedPullOf(
  deps: RegistryDeps,
  ex: Exchange,
  name: string,
  resolved: ResolvedName,
  principal: Principal | undefined,
): Promise<CachedPull | undefined> {
  const target = await deps.pullThrough?.target(name);
  if (target === undefined) return undefined;
  return {
    name,
    target,
    resolved,
    principal,
    recordPush: (tx, pushed, previous) =>
      deps.events.registry(
        tx,
        pushEvent(
          {
            req: ex.req,
            clientAddress: ex.clientAddress,
            principal,
            repository: name,
            repoUid: pushed.repo.uid,
            groupUid: pushed.repo.groupUid,
            digest: pushed.digest,
            mediaType: pushed.mediaType,
            ...(pushed.tag === undefined ? {} : { tag: pushed.tag }),
            time: deps.clock.now(),
          },
          previous,
        ),
      ),
    onQuota: quotaEventSink(deps.events, { principal, clock: deps.clock }),
  };
}
