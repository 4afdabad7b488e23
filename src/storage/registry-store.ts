import type { ListSlice, ListWindow } from "../core/list.js";
import type { CommonFilter } from "./common-filter.js";

/**
 * The registry's metadata: repos and their tags (with each tag's history), and the OCI data plane:
 * which blobs exist and which repos link them, stored manifests and what they reference, and
 * upload sessions. The bytes of blobs live in a BlobDriver (src/storage/blobs); manifests
 * (≤ 4 MiB) are kept here, in the metadata database, so a manifest GET is one indexed read.
 * Conventions are those of store.ts (times in ms, undefined for missing).
 */

export interface RepoRow {
  uid: string;
  /** The group the repo is under (the parent of its uid). */
  groupUid: string;
  name: string;
  description: string;
  readme: string;
  createTime: number;
  updateTime: number;
}

/** A repo as a list returns it: everything but the readme (a sub-resource of its own). */
export type RepoListRow = Omit<RepoRow, "readme">;

export interface RepoFilter extends CommonFilter {
  name?: string;
}

export interface RepoStore {
  get(uid: string): Promise<RepoRow | undefined>;
  getByName(groupUid: string, name: string): Promise<RepoRow | undefined>;
  list(filter: RepoFilter, window: ListWindow): Promise<ListSlice<RepoListRow>>;
  /**
   * The readmes of the repos among `uids` that exist, by uid, in one read (for a listed page of
   * repos, which a list answers without readmes). An empty readme is an entry too.
   */
  readmes(uids: readonly string[]): Promise<Map<string, string>>;
  /** ALREADY_EXISTS when the group already has a repo of that name. */
  insert(row: RepoRow): Promise<void>;
  update(row: RepoRow): Promise<boolean>;
  /** Deletes the repo, its tags and its tag history. */
  delete(uid: string): Promise<boolean>;
}

export interface TagRow {
  uid: string;
  repoUid: string;
  name: string;
  digest: string;
  deprecated: boolean;
  createTime: number;
  updateTime: number;
}

export interface TagFilter extends CommonFilter {
  name?: string;
  digest?: string;
  /** Only tags with updateTime >= this. */
  updatedSince?: number;
  /** Leave out referrer tags (`sha256-<64 hex>…`). */
  hideReferrers?: boolean;
  /** Leave out date-stamped tags (`…-20yymmdd`). */
  hideDates?: boolean;
  /** Leave out epoch tags (`…-r<N>`). */
  hideEpochs?: boolean;
}

/**
 * One entry of a tag's history: the tag pointed to `digest` from `updateTime` on; an empty digest
 * records a delete (the tag resolved to nothing from then on).
 */
export interface TagHistoryRow {
  repoUid: string;
  tagName: string;
  digest: string;
  updateTime: number;
}

export interface TagStore {
  get(uid: string): Promise<TagRow | undefined>;
  getByName(repoUid: string, name: string): Promise<TagRow | undefined>;
  /** The tags of `repoUid` naming `digest`, by name (pull policies' EOL rule by digest). */
  ofDigest(repoUid: string, digest: string): Promise<TagRow[]>;
  list(filter: TagFilter, window: ListWindow): Promise<ListSlice<TagRow>>;
  /**
   * Points tag `name` of `repoUid` at `digest` (creating it with `newUid` when missing) and sets
   * `deprecated`. When the digest changes (or the tag is new) a history row is appended in the
   * same transaction; an unchanged digest appends nothing. Returns the tag as stored.
   */
  put(args: {
    repoUid: string;
    name: string;
    digest: string;
    deprecated: boolean;
    newUid: string;
    now: number;
    /**
     * Called with the existing tag, its row locked, when the put would move it to another digest;
     * a throw aborts the put (and the transaction). Not called for a new tag or an unchanged digest.
     */
    beforeMove?: (current: TagRow) => Promise<void>;
  }): Promise<TagRow>;
  /**
   * Deletes the tag and appends a history row with an empty digest (the tag stopped resolving at
   * `now`), in one transaction; false (and no history) when the tag did not exist.
   */
  delete(uid: string, now: number): Promise<boolean>;
  /**
   * Repo and name of the tag `uid` named when it was last deleted (its delete record carries the
   * uid, since migration 0016), or undefined when no such record exists.
   */
  deletedTag(uid: string): Promise<{ repoUid: string; name: string } | undefined>;
  /**
   * The history record in force at `time`: the last one of the tag with updateTime ≤ `time`
   * (an empty digest: the tag was deleted then), or undefined when the history starts later.
   */
  historyAt(repoUid: string, tagName: string, time: number): Promise<TagHistoryRow | undefined>;
  /** Tag names of `repoUid` in byte order, after `after` when given, at most `limit` (registry tags list). */
  names(repoUid: string, args: { after?: string; limit: number }): Promise<string[]>;
  /** True when a history row of one of `tagNames` in `repoUid` names `digest` (the tag points or pointed to it). */
  pointedTo(repoUid: string, tagNames: readonly string[], digest: string): Promise<boolean>;
  /** History of one tag, oldest first, within [start, end), at most `limit` rows. */
  history(args: {
    repoUid: string;
    tagName: string;
    start?: number;
    end?: number;
    limit: number;
  }): Promise<TagHistoryRow[]>;
}

/** A blob whose bytes are committed to blob storage. */
export interface BlobRow {
  /** `<algorithm>:<hex>`, e.g. `sha256:…`. */
  digest: string;
  size: number;
  createTime: number;
}

export interface BlobRecordStore {
  /** The blob when it is committed to storage, linked to a repo or not. */
  get(digest: string): Promise<BlobRow | undefined>;
  /** The blob when `repoUid` links it (it was pushed or mounted there), else undefined. */
  getLinked(repoUid: string, digest: string): Promise<BlobRow | undefined>;
  /**
   * Records the blob (keeping the first row when it is already known) and links it to `repoUid`;
   * idempotent. NOT_FOUND when the repo does not exist.
   */
  link(repoUid: string, blob: BlobRow, now: number): Promise<void>;
  /** Removes the link of `digest` from `repoUid`; false when there was none. The blob row stays (GC removes it). */
  unlink(repoUid: string, digest: string): Promise<boolean>;
  /** Whether any blob is recorded at all (linked or not): does this metadata store expect blob bytes? */
  anyRecorded(): Promise<boolean>;
}

/** What a manifest points at: a blob (config, layer, …) or a child manifest (of an index). */
export interface ManifestReference {
  digest: string;
  kind: "blob" | "manifest";
}

/** A manifest or index stored in a repo, with the fields the referrers API reports. */
export interface ManifestRow {
  repoUid: string;
  digest: string;
  mediaType: string;
  /** The exact bytes pushed (the digest is over these). */
  content: Uint8Array;
  /** `subject.digest`, for the referrers API. */
  subjectDigest?: string;
  /** `artifactType`, or the config media type for manifests without one (OCI rule). */
  artifactType?: string;
  annotations?: Record<string, string>;
  createTime: number;
}

/** A manifest's descriptor as the referrers API lists it (no content). */
export interface ReferrerRow {
  digest: string;
  mediaType: string;
  size: number;
  artifactType?: string;
  annotations?: Record<string, string>;
}

export interface ManifestStore {
  get(repoUid: string, digest: string): Promise<ManifestRow | undefined>;
  /** Whether `repoUid` holds manifest `digest` (cheaper than `get`). */
  has(repoUid: string, digest: string): Promise<boolean>;
  /**
   * Stores the manifest with its references; a manifest already stored with that digest is kept as
   * it is (same digest, same bytes). NOT_FOUND when the repo does not exist.
   */
  put(row: ManifestRow, references: readonly ManifestReference[]): Promise<void>;
  /** Deletes the manifest and its references; false when it was not there. */
  delete(repoUid: string, digest: string): Promise<boolean>;
  /** Manifests of `repoUid` whose subject is `subjectDigest`, by digest; optionally one artifactType. */
  referrers(repoUid: string, subjectDigest: string, artifactType?: string): Promise<ReferrerRow[]>;
  /** The manifests of `repoUid` that reference `digest` (as a blob or as a child manifest). */
  referencedBy(repoUid: string, digest: string): Promise<string[]>;
  /** The indexes of `repoUid` listing manifest `digest` as a child (kind "manifest" only), by digest. */
  indexesOf(repoUid: string, digest: string): Promise<string[]>;
}

/** An upload session: bytes so far live in the blob driver under `uploads/<id>`. */
export interface UploadRow {
  /** Random, unguessable session id (it appears in the Location URL). */
  id: string;
  repoUid: string;
  /** Who started it; continuing needs the same identity (the token may have expired since). */
  identityUid: string;
  /** Bytes received so far. */
  size: number;
  createTime: number;
  updateTime: number;
}

export interface UploadStore {
  get(id: string): Promise<UploadRow | undefined>;
  /** NOT_FOUND when the repo does not exist. */
  insert(row: UploadRow): Promise<void>;
  /** Sets the size reached, only when it is still `expectedSize` (optimistic: concurrent chunks lose). */
  advance(id: string, expectedSize: number, size: number, now: number): Promise<boolean>;
  delete(id: string): Promise<boolean>;
  /** Sessions last touched before `time` (abandoned uploads, for garbage collection). */
  staleBefore(time: number): Promise<UploadRow[]>;
}

/** The liveness rules' time bounds for one garbage collection run (ms since the epoch). */
export interface GarbageBounds {
  /** Rows created at or after this are young: never collected (protects pushes in flight). */
  graceStart: number;
  /** Tag history at or after this keeps its digests (and the digest each tag had at this time). */
  windowStart: number;
}

/**
 * What garbage collection asks of the store. A manifest is LIVE when it is young, a tag points at
 * it, the recent tag history names it (including what each tag pointed to at `windowStart`), an
 * index in the repo lists it, or its subject is in the repo (referrers live with their subject).
 * Dead manifests are deleted one at a time under the registry lock, re-checking the rules.
 */
export interface GarbageStore {
  /**
   * Takes the registry lock for the rest of the current transaction: `shared` for writes that make
   * content reachable (manifest and blob commits, tag writes), `exclusive` for GC deletions, so a
   * deletion never interleaves with a push. PostgreSQL: a transaction-scoped advisory lock; SQLite:
   * nothing (its transactions already hold the database write lock).
   */
  lockRegistry(mode: "shared" | "exclusive"): Promise<void>;
  /** Up to `limit` dead manifests. */
  deadManifests(bounds: GarbageBounds, limit: number): Promise<{ repoUid: string; digest: string }[]>;
  /** Deletes the manifest when it is still dead; true when it was deleted. */
  deleteIfDead(repoUid: string, digest: string, bounds: GarbageBounds): Promise<boolean>;
  /** Deletes repo links older than `graceStart` that no manifest of their repo references; how many. */
  deleteUnreferencedLinks(graceStart: number): Promise<number>;
  /** Up to `limit` blobs that no repo links and no vulnerability report keeps as its raw bytes, recorded before `graceStart`. */
  orphanBlobs(graceStart: number, limit: number): Promise<BlobRow[]>;
  /** Deletes the blob row when it is still an orphan; true when it was deleted. */
  deleteIfOrphan(digest: string, graceStart: number): Promise<boolean>;
}
