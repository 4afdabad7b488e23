/**
 * Registry usage per organization (ADR 0047). Stored bytes count every manifest stored in the
 * organization's repos and every blob those manifests reference, each distinct digest once. The
 * SQL store keeps the organization's total current in the same transaction as every manifest
 * write and delete (manifest put and delete, garbage collection, repo delete), so reading it is
 * one indexed read; `recount` computes the same from the manifests themselves.
 */

/** An organization's counters and quota; quotas are 0 when unlimited. */
export interface OrgUsageRow {
  orgUid: string;
  /** Bytes of the distinct manifests and blobs of the organization, kept current incrementally. */
  storageBytes: number;
  quotaStorageBytes: number;
  quotaRepoCount: number;
  updateTime: number;
}

/** A quota change: a field left out keeps its value, 0 is unlimited. */
export interface QuotaChange {
  storageBytes?: number;
  repoCount?: number;
}

export interface UsageStore {
  /**
   * The organization's row, or undefined when it never stored anything nor had a quota (all zero).
   * With `forUpdate` inside a transaction, the row stays locked until its end (PostgreSQL
   * `FOR UPDATE`; SQLite transactions hold the database's write lock anyway).
   */
  get(orgUid: string, opts?: { forUpdate?: boolean }): Promise<OrgUsageRow | undefined>;
  /** Sets the quota fields given (creating the row), and returns the row as stored. */
  setQuota(orgUid: string, change: QuotaChange, now: number): Promise<OrgUsageRow>;
  /** Of `digests`, the ones the organization counts now (a push of them adds nothing). */
  counted(orgUid: string, digests: readonly string[]): Promise<Set<string>>;
  /** How many repos are under group `groupUid` (an organization or a folder), at any depth. */
  repoCount(groupUid: string): Promise<number>;
  /** How many repos and tags are under group `groupUid` (an organization or a folder), at any depth. */
  counts(groupUid: string): Promise<{ repoCount: number; tagCount: number }>;
  /**
   * The stored bytes of group `groupUid` computed from its manifests and their blob references, by
   * a scan: for an organization it equals the incremental `storageBytes` (the property tests
   * check it); for a folder it is the folder's own usage.
   */
  recount(groupUid: string): Promise<number>;
}
