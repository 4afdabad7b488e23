import { PassThrough, Readable } from "node:stream";
import type { Clock } from "../../core/clock.js";
import type { Principal } from "../../core/context.js";
import { MAX_REPOSITORY_PATH_LENGTH, REPOSITORY_PATH } from "../../core/registry-name.js";
import type { EventRecorder } from "../../events/event-recorder.js";
import { pushEvent } from "../../events/registry-events.js";
import type { RepoRow } from "../../storage/registry-store.js";
import type { Store } from "../../storage/store.js";
import type { BlobUploads } from "../data-plane/blob-uploads.js";
import type { RegistryContent } from "../data-plane/registry-content.js";
import type { RepoResolver } from "../data-plane/repo-resolver.js";
import { digestOf, isDigest, parseDigest } from "../digest.js";
import { EMPTY_BLOB_CONTENT, EMPTY_BLOB_DIGEST, parseManifest } from "../manifest-parser.js";
import { quotaEventSink } from "../quotas/storage-quota.js";
import type { UpstreamDirectory } from "../upstreams/upstream-directory.js";
import type { ReplicationEndpoint } from "./replication-endpoint.js";

/** What Wharf's side of a replication is built from (the registry's own content and push path). */
export interface LocalEndpointDeps {
  store: Store;
  content: RegistryContent;
  uploads: BlobUploads;
  resolver: RepoResolver;
  events: EventRecorder;
  clock: Clock;
  /** The pull-through cache's namespaces, which replication must not write into (none checked when absent). */
  upstreams?: Pick<UpstreamDirectory, "lookup"> | undefined;
}

/** Why a replication may not write to a Wharf path. */
export class LocalPathError extends Error {
  override name = "LocalPathError";
}

/**
 * Wharf's content as a replication endpoint, for the rule's organization `orgUid` only: reads see
 * repos under it, writes go through the registry's push path (repo and folders created by the
 * domain's create code, blobs verified by `putMonolithic`, manifests committed with their tag and
 * history, storage quota and immutability rules applied) and record a push event per manifest by
 * `principal`, with `userAgent` as the event's user agent. A path outside the organization, not a
 * valid repository path, or in an upstream's namespace (the pull-through cache's; writes only),
 * is LocalPathError.
 */
export function localEndpoint(
  deps: LocalEndpointDeps,
  scope: { orgUid: string; orgName: string; principal: Principal; userAgent: string },
): ReplicationEndpoint {
  const { content, uploads, resolver, events, clock } = deps;
  const { principal } = scope;

  async function existing(repo: string): Promise<RepoRow | undefined> {
    const resolved = await resolver.resolve(checked(repo));
    return resolved.groups[0] === scope.orgUid ? resolved.repo : undefined;
  }

  async function writable(repo: string): Promise<RepoRow> {
    const resolved = await resolver.resolve(checked(repo));
    if (resolved.groups[0] !== scope.orgUid) {
      throw new LocalPathError(`${repo} is not under organization ${scope.orgName}`);
    }
    const upstream = await deps.upstreams?.lookup(repo);
    if (upstream !== undefined) {
      throw new LocalPathError(
        `${repo} is in the namespace of upstream ${upstream.upstream.name}, which only its cache writes`,
      );
    }
    return resolver.ensureRepo(resolved, principal);
  }

  function checked(repo: string): string {
    if (
      !repo.startsWith(`${scope.orgName}/`) ||
      repo.length > MAX_REPOSITORY_PATH_LENGTH ||
      !REPOSITORY_PATH.test(repo)
    ) {
      throw new LocalPathError(`"${repo.slice(0, 300)}" is not a repository path under ${scope.orgName}`);
    }
    return repo;
  }

  return {
    label: "wharf",

    async tagDigest(repo, tag) {
      const row = await existing(repo);
      return row && (await content.tagDigest(row.uid, tag));
    },

    async manifest(repo, reference) {
      const row = await existing(repo);
      if (!row) return undefined;
      const digest = isDigest(reference) ? reference : await content.tagDigest(row.uid, reference);
      return digest === undefined ? undefined : content.manifest(row.uid, digest);
    },

    async hasManifest(repo, digest) {
      const row = await existing(repo);
      return row !== undefined && (await deps.store.manifests.has(row.uid, digest));
    },

    async hasBlob(repo, digest) {
      const row = await existing(repo);
      return row !== undefined && (await content.linkedBlob(row.uid, digest)) !== undefined;
    },

    async openBlob(repo, digest, size, signal) {
      const row = await existing(repo);
      const linked = row && (await content.linkedBlob(row.uid, digest));
      // The OCI empty blob needs no upload in Wharf, so a manifest may name it unlinked.
      if (!linked && digest === EMPTY_BLOB_DIGEST) return Readable.from([EMPTY_BLOB_CONTENT]);
      if (!linked) throw new LocalPathError(`blob ${digest} is not in ${repo}`);
      const sink = new PassThrough({ highWaterMark: 1 << 20 });
      const stop = () => sink.destroy(signal.reason as Error);
      signal.addEventListener("abort", stop, { once: true });
      content
        .pipeBlob(parseDigest(digest), sink, undefined, size)
        .catch((err: unknown) => sink.destroy(err as Error))
        .finally(() => signal.removeEventListener("abort", stop));
      return sink;
    },

    async putBlob(repo, digest, size, body) {
      const row = await writable(repo);
      await uploads.putMonolithic(row.uid, parseDigest(digest), body, size, principal.identityUid);
    },

    async mountBlob(repo, digest, fromRepo) {
      const from = await existing(fromRepo);
      if (!from) return false;
      const row = await writable(repo);
      return uploads.mount(from.uid, row.uid, digest);
    },

    async putManifest(repo, reference, manifest) {
      const actual = digestOf(manifest.content, parseDigest(manifest.digest).algorithm);
      if (actual !== manifest.digest) {
        throw new LocalPathError(`manifest content hashes to ${actual}, not ${manifest.digest}`);
      }
      const parsed = parseManifest(manifest.content, manifest.mediaType);
      const row = await writable(repo);
      const tag = isDigest(reference) ? undefined : reference;
      const now = clock.now();
      await content.pushManifest({
        repo: row,
        name: repo,
        digest: manifest.digest,
        content: manifest.content,
        parsed,
        ...(tag === undefined ? {} : { tag }),
        now,
        recordPush: (tx, previous) =>
          events.registry(
            tx,
            pushEvent(
              {
                ...{ principal, userAgent: scope.userAgent, clientAddress: "" },
                ...{ repository: repo, repoUid: row.uid, groupUid: row.groupUid },
                ...{ digest: manifest.digest, mediaType: parsed.mediaType, time: now },
                ...(tag === undefined ? {} : { tag }),
              },
              previous,
            ),
          ),
        onQuota: quotaEventSink(events, { principal, clock }),
      });
    },

    async referrers(repo, digest) {
      const row = await existing(repo);
      if (!row) return [];
      return (await content.referrers(row.uid, digest, undefined)).map((r) => ({
        digest: r.digest,
        mediaType: r.mediaType,
        size: r.size,
      }));
    },

    async *tags(repo) {
      const row = await existing(repo);
      if (!row) return;
      let after: string | undefined;
      for (;;) {
        const page = await content.tagNames(row.uid, {
          ...(after === undefined ? {} : { after }),
          limit: 500,
        });
        yield* page;
        if (page.length < 500) return;
        after = page.at(-1);
      }
    },
  };
}
