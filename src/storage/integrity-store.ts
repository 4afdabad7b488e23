import type { BlobRow, TagRow } from "./registry-store.js";

/**
 * What the integrity check (`wharf fsck`) and the backup read of the registry's metadata: whole-table
 * walks in key order, so memory stays bounded however large the registry is. Reads only; repairs go
 * through the domain's own write paths. Conventions are those of store.ts.
 */

/** A digest that manifests reference as a blob, with the size its blob row records. */
export interface ReferencedBlobRow {
  digest: string;
  /** The recorded size, or undefined when no blob row exists for the digest (metadata damage). */
  size: number | undefined;
}

/** A manifest of a repo: the pair that identifies it. */
export interface ManifestKey {
  repoUid: string;
  digest: string;
}

export interface IntegrityStore {
  /** Every blob row, in digest (byte) order after `after` (exclusive, when given), at most `limit`. */
  blobPage(after: string | undefined, limit: number): Promise<BlobRow[]>;
  /**
   * Each distinct digest some manifest references as a blob (`kind = "blob"`), in digest order after
   * `after`, at most `limit`, with its blob row's size (undefined when the row is missing).
   */
  referencedBlobPage(after: string | undefined, limit: number): Promise<ReferencedBlobRow[]>;
  /**
   * Blob rows no manifest of any repo references, in digest order after `after`, at most `limit`
   * (orphans: garbage collection removes them once their links and rows are past its grace).
   */
  unreferencedBlobPage(after: string | undefined, limit: number): Promise<BlobRow[]>;
  /**
   * Tags whose digest names no manifest of their repo (dangling), in uid order after `after`, at
   * most `limit`.
   */
  danglingTagPage(after: string | undefined, limit: number): Promise<TagRow[]>;
  /**
   * The manifests, in any repo (or only in `repoUid` when given), that reference `digest` as a blob
   * or as a child manifest; by repo uid, then digest.
   */
  referencingManifests(digest: string, repoUid?: string): Promise<ManifestKey[]>;
}
