/**
 * How the registry finds the upstream a repository name falls under (issue 36): the contract
 * between the Upstream resource (upstreams-service, its store) and the pull-through cache.
 * Implemented by `createUpstreamDirectory`.
 */

/** An upstream as the cache uses it, its password opened. */
export interface UpstreamConfig {
  uid: string;
  /** The organization's uid (the upstream's parent). */
  orgUid: string;
  orgName: string;
  /** The upstream's name: the path component below the organization that stands for it. */
  name: string;
  /** `https://host[:port][/prefix]`, as the API stored it. */
  url: string;
  /** "" when anonymous. */
  username: string;
  /** "" when anonymous; opened from its sealed form. Never log it. */
  password: string;
  /** How long a tag's cached digest is served before one HEAD checks it again (default 10 min). */
  tagTtlMs: number;
  /** Changes when the upstream is updated (clients built from an older one are dropped). */
  updateTime: number;
}

/** A repository name resolved to its upstream: `<org>/<upstream name>/<path>` → `path` at the upstream. */
export interface UpstreamTarget {
  upstream: UpstreamConfig;
  /** The repository at the upstream (below the URL's prefix), e.g. `library/alpine`. */
  path: string;
}

/** Finds upstreams by repository name; answers from a cache that follows the store's change feed. */
export interface UpstreamDirectory {
  /**
   * The upstream `repository` (a full registry name, `acme/hub/library/alpine`) falls under, or
   * undefined when its first two components are not an organization and one of its upstreams.
   * A name equal to `<org>/<upstream>` (no path) is undefined.
   */
  lookup(repository: string): Promise<UpstreamTarget | undefined>;
  /** The upstream `<org>/<name>` (e.g. for `--mirror-upstream docker.io=acme/hub`), or undefined. */
  byName(orgName: string, upstreamName: string): Promise<UpstreamConfig | undefined>;
}
