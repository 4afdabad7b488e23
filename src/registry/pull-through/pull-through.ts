import type { Clock } from "../../core/clock.js";
import type { BlobUploads } from "../data-plane/blob-uploads.js";
import type { RegistryContent } from "../data-plane/registry-content.js";
import type { RepoResolver } from "../data-plane/repo-resolver.js";
import type { Digest } from "../digest.js";
import type { RemoteRegistry } from "../remote/remote-registry.js";
import type { UpstreamConfig, UpstreamDirectory, UpstreamTarget } from "../upstreams/upstream-directory.js";
import { type BlobAnswer, type BlobOutcome, createCachedBlobs } from "./cached-blobs.js";
import { createCachedManifests, type LocalManifest } from "./cached-manifests.js";
import type { CachedPull } from "./pull-context.js";
import { createUpstreamClients } from "./upstream-clients.js";
import { createUpstreamWarnings } from "./upstream-warnings.js";

export type { BlobAnswer, BlobOutcome } from "./cached-blobs.js";
export type { LocalManifest } from "./cached-manifests.js";
export type { CachedPull, CachedPush } from "./pull-context.js";

/**
 * The pull-through cache (issue 36, ADR 0052): pulling `<org>/<upstream>/<path>` serves the
 * upstream's `<path>`, recording what it fetches like a push so later pulls are local.
 */
export interface PullThrough {
  /** The upstream a repository name falls under, or undefined (an ordinary repository). */
  target(name: string): Promise<UpstreamTarget | undefined>;
  /** See CachedManifests.manifest. */
  manifest(pull: CachedPull, reference: { tag: string } | { digest: string }): Promise<LocalManifest>;
  /** A blob the pull's repo does not link: see CachedBlobs.fetch. */
  blob(pull: CachedPull, digest: Digest, answer?: BlobAnswer): Promise<BlobOutcome>;
  /** Closes the upstream clients. */
  close(): Promise<void>;
}

/** What the cache is built from. */
export interface PullThroughDeps {
  upstreams: UpstreamDirectory;
  content: RegistryContent;
  uploads: BlobUploads;
  resolver: RepoResolver;
  /** Builds the client of one upstream (kept per uid and updateTime; closed when replaced). */
  remoteFor: (upstream: UpstreamConfig) => RemoteRegistry;
  clock: Clock;
  logger: (line: object) => void;
}

/** Creates the pull-through cache. */
export function createPullThrough(deps: PullThroughDeps): PullThrough {
  const clients = createUpstreamClients(deps.remoteFor);
  const warnings = createUpstreamWarnings(deps.clock, deps.logger);
  const manifests = createCachedManifests({ ...deps, clients, warnings });
  const blobs = createCachedBlobs({ ...deps, clients });
  return {
    target: (name) => deps.upstreams.lookup(name),
    manifest: (pull, reference) => manifests.manifest(pull, reference),
    blob: (pull, digest, answer) => blobs.fetch(pull, digest, answer),
    close: () => clients.close(),
  };
}
