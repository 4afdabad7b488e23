import type { Principal } from "../../core/context.js";
import type { RepoRow } from "../../storage/registry-store.js";
import type { Store } from "../../storage/store.js";
import type { RepoResolver, ResolvedName } from "../data-plane/repo-resolver.js";
import type { QuotaEventSink } from "../quotas/storage-quota.js";
import type { UpstreamTarget } from "../upstreams/upstream-directory.js";

/** A manifest the cache records, as its push event names it. */
export interface CachedPush {
  repo: RepoRow;
  digest: string;
  mediaType: string;
  tag?: string | undefined;
}

/**
 * One pull in an upstream's namespace, as the OCI edge hands it to the cache: the repository, its
 * upstream, and who pulls (the principal that content recorded on their behalf is attributed to:
 * repo and folder creation events, push events, quota events).
 */
export interface CachedPull {
  /** The full repository name pulled, e.g. `acme/hub/library/alpine`. */
  name: string;
  target: UpstreamTarget;
  resolved: ResolvedName;
  principal: Principal | undefined;
  /** Writes the push event of a manifest the cache records, in the commit's transaction. */
  recordPush(tx: Store, pushed: CachedPush, tagPreviousDigest: string | undefined): Promise<void>;
  /** Records quota events of the commit (the 80 % warning; a refusal is recorded by the content). */
  onQuota?: QuotaEventSink | undefined;
}

/** The repo of `pull`, created (with its folders, through the domain's create code) when missing. */
export async function cachedRepo(resolver: RepoResolver, pull: CachedPull): Promise<RepoRow> {
  return pull.resolved.repo ?? resolver.ensureRepo(pull.resolved, pull.principal);
}
