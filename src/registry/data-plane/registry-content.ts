import type { Writable } from "node:stream";
import type { Clock } from "../../core/clock.js";
import type { Principal } from "../../core/context.js";
import type { EventRecorder } from "../../events/event-recorder.js";
import { DeleteTagRequestSchema } from "../../gen/platform/registry/v2/tags_pb.js";
import type { BlobDriver } from "../../storage/blobs/blob-driver.js";
import { BlobNotFoundError, BlobSizeMismatchError } from "../../storage/blobs/blob-driver.js";
import { blobKey } from "../../storage/blobs/blob-layout.js";
import type { Store } from "../../storage/store.js";
import { ContentDamagedError, ContentMissingError } from "../content-errors.js";
import type { Digest } from "../digest.js";
import { denyImmutableRegistryTag } from "../immutability/tag-guard.js";
import { withRefusalRecorded } from "../quotas/storage-quota.js";
import { tagHistoryPage } from "../tag-history.js";
import { type CachedManifest, manifestCacheOf } from "./manifest-cache.js";
import { commitManifest } from "./manifest-commit.js";

/** A manifest as the registry serves it: its digest, media type and stored bytes. */
export type StoredManifest = CachedManifest;

/** A manifest whose subject is a given digest, as the referrers API lists it. */
export interface Referrer {
  digest: string;
  mediaType: string;
  size: number;
  artifactType?: string | undefined;
  annotations?: Record<string, string> | undefined;
}

/** One record of a tag's history; an empty `digest` is a delete. */
export interface TagHistoryRecord {
  digest: string;
  updateTime: number;
}

/** Bytes `[start, end)` of a blob (`end` omitted: to its end). */
export interface ByteRange {
  start: number;
  end?: number;
}

/**
 * What the registry's read and delete paths ask of its content, by repo uid: blobs a repo links and
 * their bytes, manifests (through the shared manifest cache), tags, their history and referrers.
 * Pushes go through BlobUploads and `pushManifest`. The OCI edge uses only this, never the store or
 * the blob driver.
 */
export interface RegistryContent {
  /** The blob `digest` as `repoUid` links it (its size), or undefined when the repo does not. */
  linkedBlob(repoUid: string, digest: string): Promise<{ digest: string; size: number } | undefined>;
  /**
   * Unlinks blob `digest` from the repo (GC reclaims the bytes), running `audited` (the audit
   * record) in the same transaction; false when it was not linked (nothing recorded).
   */
  unlinkBlob(repoUid: string, digest: string, audited?: (tx: Store) => Promise<void>): Promise<boolean>;
  /**
   * Resolves once the blob store confirms the bytes of `digest` exist (one `stat`: the metadata is
   * not trusted alone) with `expectedSize` bytes when given; a missing object is
   * ContentMissingError, one of another size ContentDamagedError, a failing stat rejects with its
   * own error.
   */
  requireBlobBytes(digest: Digest, expectedSize?: number): Promise<void>;
  /**
   * Writes bytes `range` of blob `digest` into `sink` (see `BlobDriver.pipeTo`: nothing is written
   * when the object is missing, cannot be opened or, with `expectedSize`, is not that size). A
   * missing object is ContentMissingError, one of another size ContentDamagedError.
   */
  pipeBlob(digest: Digest, sink: Writable, range?: ByteRange, expectedSize?: number): Promise<void>;
  /** The digest tag `tag` of the repo names, or undefined when there is no such tag. */
  tagDigest(repoUid: string, tag: string): Promise<string | undefined>;
  /**
   * The manifest `digest` from the cache, or undefined. Only where the repo is known to hold it (a
   * tag read in the same request named it): the cache does not know about deletes elsewhere.
   */
  cachedManifest(repoUid: string, digest: string): StoredManifest | undefined;
  /** The manifest `digest` of the repo read from the store (and then cached), or undefined. */
  manifest(repoUid: string, digest: string): Promise<StoredManifest | undefined>;
  /**
   * Stores a manifest and moves its tag: commitManifest, dropping any cached entry first. A refusal
   * by the storage quota records the `quota.exceeded` event (through `onQuota`) in its own transaction.
   */
  pushManifest(args: Parameters<typeof commitManifest>[1]): Promise<void>;
  /**
   * Deletes tag `tag` of the repo, recording `tag.deleted` by `principal` (and running `audited`,
   * the audit record, in the same transaction); false when there is none. With `repoName` (the
   * registry edge), a tag an immutability rule protects is ImmutableTagError and nothing is
   * deleted; without it (an operator's repair, `wharf fsck`) rules are not checked.
   */
  deleteTag(
    repoUid: string,
    tag: string,
    principal: Principal | undefined,
    repoName?: string,
    audited?: (tx: Store) => Promise<void>,
  ): Promise<boolean>;
  /**
   * Deletes manifest `digest` of the repo and every tag pointing at it (each a `tag.deleted` by
   * `principal`, recorded in the tag history), in one transaction with `audited` (the audit
   * record); false when there is none. A tag an immutability rule protects among them is
   * ImmutableTagError naming `repoName`, and nothing is deleted.
   */
  deleteManifest(
    repoUid: string,
    digest: string,
    principal: Principal | undefined,
    repoName: string,
    audited?: (tx: Store) => Promise<void>,
  ): Promise<boolean>;
  /** The manifests of the repo whose subject is `digest`, optionally of one artifact type. */
  referrers(repoUid: string, digest: string, artifactType: string | undefined): Promise<Referrer[]>;
  /** Tag names of the repo in byte order, after `after`, at most `limit`. */
  tagNames(repoUid: string, page: { after?: string; limit: number }): Promise<string[]>;
  /**
   * A page of the history of `tag` (oldest first, `start` inclusive, `end` exclusive), or undefined
   * when the tag never existed in the repo.
   */
  tagHistory(
    repoUid: string,
    tag: string,
    window: { start?: number | undefined; end?: number | undefined },
  ): Promise<TagHistoryRecord[] | undefined>;
}

/** Creates the content access of the registry over `store` and `blobs`. */
export function createRegistryContent(deps: {
  store: Store;
  blobs: BlobDriver;
  clock: Clock;
  events: EventRecorder;
}): RegistryContent {
  const { store, blobs, clock, events } = deps;
  const cache = manifestCacheOf(store);
  const missing = (digest: Digest) =>
    new ContentMissingError("the blob's content is missing from storage", blobKey(digest));
  const damaged = (err: BlobSizeMismatchError) =>
    new ContentDamagedError(
      "the blob's stored content does not match its record",
      err.key,
      err.expectedSize,
      err.storedSize,
    );

  const tagDeleted = (tx: Store, repoUid: string, principal: Principal | undefined, uid: string) =>
    events.change(
      tx,
      { principal, clock },
      {
        resource: "tag",
        verb: "deleted",
        subject: uid,
        group: repoUid,
        schema: DeleteTagRequestSchema,
        body: { uid },
      },
    );

  return {
    linkedBlob: (repoUid, digest) => store.blobs.getLinked(repoUid, digest),
    unlinkBlob: (repoUid, digest, audited) =>
      store.transaction(async (tx) => {
        if (!(await tx.blobs.unlink(repoUid, digest))) return false;
        await audited?.(tx);
        return true;
      }),

    async requireBlobBytes(digest, expectedSize) {
      const stat = await blobs.stat(blobKey(digest));
      if (stat === undefined) throw missing(digest);
      if (expectedSize !== undefined && stat.size !== expectedSize) {
        throw damaged(new BlobSizeMismatchError(blobKey(digest), expectedSize, stat.size));
      }
    },

    async pipeBlob(digest, sink, range, expectedSize) {
      try {
        await blobs.pipeTo(
          blobKey(digest),
          sink,
          range,
          expectedSize === undefined ? undefined : { size: expectedSize },
        );
      } catch (err) {
        if (err instanceof BlobNotFoundError) throw missing(digest);
        throw err instanceof BlobSizeMismatchError ? damaged(err) : err;
      }
    },

    async tagDigest(repoUid, tag) {
      return (await store.tags.getByName(repoUid, tag))?.digest;
    },

    cachedManifest: (repoUid, digest) => cache.get(repoUid, digest),

    async manifest(repoUid, digest) {
      const row = await store.manifests.get(repoUid, digest);
      if (!row) return undefined;
      const manifest: StoredManifest = { digest: row.digest, mediaType: row.mediaType, content: row.content };
      cache.set(repoUid, manifest);
      return manifest;
    },

    async pushManifest(args) {
      cache.forget(args.repo.uid, args.digest);
      await withRefusalRecorded(store, args.onQuota, () => commitManifest(store, args));
    },

    deleteTag(repoUid, name, principal, repoName, audited) {
      return store.transaction(async (tx) => {
        const tag = await tx.tags.getByName(repoUid, name);
        if (!tag) return false;
        if (repoName !== undefined) await denyImmutableRegistryTag(tx, tag, repoName);
        if (!(await tx.tags.delete(tag.uid, clock.now()))) return false;
        await tagDeleted(tx, repoUid, principal, tag.uid);
        await audited?.(tx);
        return true;
      });
    },

    async deleteManifest(repoUid, digest, principal, repoName, audited) {
      const now = clock.now();
      const deleted = await store.transaction(async (tx) => {
        if (!(await tx.manifests.delete(repoUid, digest))) return false;
        const tags = await tx.tags.list(
          { uidp: { childrenOf: repoUid }, digest },
          { order: { field: "uid", desc: false }, limit: 10_000, skip: 0 },
        );
        for (const tag of tags.rows) {
          await denyImmutableRegistryTag(tx, tag, repoName);
          await tx.tags.delete(tag.uid, now);
          await tagDeleted(tx, repoUid, principal, tag.uid);
        }
        await audited?.(tx);
        return true;
      });
      if (deleted) cache.forget(repoUid, digest);
      return deleted;
    },

    referrers: (repoUid, digest, artifactType) => store.manifests.referrers(repoUid, digest, artifactType),
    tagNames: (repoUid, page) => store.tags.names(repoUid, page),

    async tagHistory(repoUid, tagName, window) {
      const rows = await tagHistoryPage(store, { repoUid, tagName, ...window });
      if (rows.length === 0 && (await store.tags.history({ repoUid, tagName, limit: 1 })).length === 0) {
        return undefined;
      }
      return rows;
    },
  };
}
