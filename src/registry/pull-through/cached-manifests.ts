import type { Clock } from "../../core/clock.js";
import type { RepoRow } from "../../storage/registry-store.js";
import type { RegistryContent } from "../data-plane/registry-content.js";
import type { RepoResolver } from "../data-plane/repo-resolver.js";
import { type ParsedManifest, parseManifest } from "../manifest-parser.js";
import { RemoteError, type RemoteManifest, type RemoteRegistry } from "../remote/remote-registry.js";
import { type CachedPull, cachedRepo } from "./pull-context.js";
import { createSingleFlight } from "./single-flight.js";
import { createTagChecks } from "./tag-checks.js";
import type { UpstreamClients } from "./upstream-clients.js";
import { UpstreamError, upstreamErrorOf } from "./upstream-error.js";
import type { UpstreamWarnings } from "./upstream-warnings.js";

/** How deep indexes may nest (an index of indexes of manifests is 2). */
const MAX_DEPTH = 4;
/** Child manifests of an index fetched at once. */
const CHILD_CONCURRENCY = 4;
/** Referrers of one manifest brought along at most. */
const MAX_REFERRERS = 100;

/** A manifest made local: the repo holding it and its digest (the edge reads it from the content). */
export interface LocalManifest {
  repo: RepoRow;
  digest: string;
}

/** The manifest half of the pull-through cache. */
export interface CachedManifests {
  /**
   * Makes `reference` of `pull` local and says where it is. By digest: a stored manifest is served
   * without asking the upstream; else it is fetched (verified by the client) and recorded. By tag:
   * a tag checked less than the upstream's tagTtl ago is served as stored; else one HEAD upstream
   * decides (same digest: served; another digest, or nothing stored: fetched and recorded with the
   * tag, which writes the tag history). An upstream that fails while a copy is stored is logged
   * (one warning per upstream per tagTtl) and the copy served; with nothing stored it is an
   * UpstreamError. Concurrent calls for the same (upstream, repo, reference) make one fetch.
   */
  manifest(pull: CachedPull, reference: { tag: string } | { digest: string }): Promise<LocalManifest>;
}

/** What the manifest cache uses. */
export interface CachedManifestsDeps {
  content: RegistryContent;
  resolver: RepoResolver;
  clients: UpstreamClients;
  warnings: UpstreamWarnings;
  clock: Clock;
  logger: (line: object) => void;
}

/** Creates the manifest half of the cache. */
export function createCachedManifests(deps: CachedManifestsDeps): CachedManifests {
  const { content, clock } = deps;
  const flights = createSingleFlight<LocalManifest>();
  const checks = createTagChecks(clock);

  /** Runs an upstream call, turning its failure into an UpstreamError. */
  async function upstreamCall<T>(pull: CachedPull, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw upstreamErrorOf(pull.target.upstream, "manifest", err);
    }
  }

  function parsedOf(pull: CachedPull, m: RemoteManifest): ParsedManifest {
    try {
      return parseManifest(m.content, m.mediaType);
    } catch (err) {
      const { upstream, path } = pull.target;
      throw new UpstreamError(
        "failed",
        "manifest",
        `upstream ${upstream.orgName}/${upstream.name} (${upstream.url}) sent manifest ${m.digest} of ${path} that is not valid: ${(err as Error).message}`,
      );
    }
  }

  /** Stores `m` (its child manifests first, fetched when missing) like a push, with `tag` if given. */
  async function record(
    pull: CachedPull,
    remote: RemoteRegistry,
    m: RemoteManifest,
    tag: string | undefined,
    depth: number,
  ): Promise<LocalManifest> {
    const parsed = parsedOf(pull, m);
    const repo = await cachedRepo(deps.resolver, pull);
    const inRepo: CachedPull = pull.resolved.repo ? pull : { ...pull, resolved: { ...pull.resolved, repo } };
    const children = parsed.references.filter((r) => r.kind === "manifest");
    if (children.length > 0 && depth >= MAX_DEPTH) {
      throw new UpstreamError("failed", "manifest", `indexes of ${pull.name} nest deeper than ${MAX_DEPTH}`);
    }
    await eachLimited(children, CHILD_CONCURRENCY, async (child) => {
      if (await content.manifest(repo.uid, child.digest)) return;
      const fetched = await upstreamCall(pull, () => remote.getManifest(pull.target.path, child.digest));
      await record(inRepo, remote, fetched, undefined, depth + 1);
    });
    await content.pushManifest({
      repo,
      name: pull.name,
      digest: m.digest,
      content: m.content,
      parsed,
      ...(tag === undefined ? {} : { tag }),
      now: clock.now(),
      references: "cached",
      recordPush: (tx, previous) =>
        pull.recordPush(tx, { repo, digest: m.digest, mediaType: parsed.mediaType, tag }, previous),
      ...(pull.onQuota ? { onQuota: pull.onQuota } : {}),
    });
    return { repo, digest: m.digest };
  }

  /**
   * Brings the referrers the upstream lists for `digest` (signatures, SBOMs, attestations). A
   * failure here is logged and does not fail the pull: the image itself is recorded.
   */
  async function recordReferrers(pull: CachedPull, remote: RemoteRegistry, local: LocalManifest) {
    const inRepo: CachedPull = { ...pull, resolved: { ...pull.resolved, repo: local.repo } };
    try {
      const listed = await remote.referrers(pull.target.path, local.digest);
      for (const d of listed.slice(0, MAX_REFERRERS)) {
        if (await content.manifest(local.repo.uid, d.digest)) continue;
        const fetched = await remote.getManifest(pull.target.path, d.digest);
        await record(inRepo, remote, fetched, undefined, 1);
      }
    } catch (err) {
      deps.logger({
        time: new Date(clock.now()).toISOString(),
        level: "warn",
        msg: "pull-through: referrers not cached",
        repository: pull.name,
        digest: local.digest,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** Fetches `reference` (a digest, or a tag with nothing stored), records it and its referrers. */
  async function fetchAndRecord(pull: CachedPull, reference: string, tag: string | undefined) {
    const remote = deps.clients.clientFor(pull.target.upstream);
    const fetched = await upstreamCall(pull, () => remote.getManifest(pull.target.path, reference));
    const local = await record(pull, remote, fetched, tag, 0);
    await recordReferrers(pull, remote, local);
    return local;
  }

  /** The tag flight: one HEAD when a copy is stored, else a GET by tag. */
  async function refreshTag(pull: CachedPull, tag: string, key: string): Promise<LocalManifest> {
    const { upstream, path } = pull.target;
    const repo = pull.resolved.repo;
    const stored = repo && (await content.tagDigest(repo.uid, tag));
    if (!repo || stored === undefined) {
      const local = await fetchAndRecord(pull, tag, tag);
      checks.checked(key);
      return local;
    }
    const servedStored = (err: unknown): LocalManifest => {
      deps.warnings.warn(upstream, err instanceof Error ? err.message : String(err));
      checks.checked(key);
      return { repo, digest: stored };
    };
    const remote = deps.clients.clientFor(upstream);
    let head: Awaited<ReturnType<RemoteRegistry["headManifest"]>>;
    try {
      head = await remote.headManifest(path, tag);
    } catch (err) {
      return servedStored(err);
    }
    // The upstream no longer has the tag: the cached copy stays until deleted here (ADR 0052).
    if (head === undefined || head.digest === stored) {
      checks.checked(key);
      return { repo, digest: stored };
    }
    try {
      const known = await content.manifest(repo.uid, head.digest);
      const local = known
        ? await record(pull, remote, known, tag, 0)
        : await fetchAndRecord(pull, head.digest, tag);
      checks.checked(key);
      return local;
    } catch (err) {
      const cause = err instanceof UpstreamError ? err : err instanceof RemoteError ? err : undefined;
      if (cause === undefined || (cause instanceof UpstreamError && cause.kind === "not-found")) throw err;
      return servedStored(err);
    }
  }

  return {
    async manifest(pull, reference) {
      const { upstream, path } = pull.target;
      const repo = pull.resolved.repo;
      if ("digest" in reference) {
        if (repo && (await content.manifest(repo.uid, reference.digest))) {
          return { repo, digest: reference.digest };
        }
        const key = `d\n${upstream.uid}\n${path}\n${reference.digest}`;
        return flights.run(key, () => fetchAndRecord(pull, reference.digest, undefined)).promise;
      }
      const key = `t\n${upstream.uid}\n${path}\n${reference.tag}`;
      if (repo && checks.fresh(key, upstream.tagTtlMs)) {
        const stored = await content.tagDigest(repo.uid, reference.tag);
        if (stored !== undefined) return { repo, digest: stored };
      }
      return flights.run(key, () => refreshTag(pull, reference.tag, key)).promise;
    },
  };
}

/** Runs `fn` over `items`, at most `limit` at a time; rejects with the first failure. */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
