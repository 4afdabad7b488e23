/**
 * The contract between replication's runs (rules, triggers, leases, the run records: the
 * replication service) and its copier (what copies a rule's content between Wharf and a remote
 * registry; `createReplicationCopier`). Issue 36, ADRs 0054 and 0055.
 */

/** A rule as the copier needs it, its remote password opened. */
export interface ReplicationRuleConfig {
  uid: string;
  orgUid: string;
  orgName: string;
  name: string;
  direction: "PUSH" | "PULL";
  remote: { url: string; username: string; password: string };
  /** A glob (tag-patterns.ts dialect) on the repo path below the organization (PUSH) or the remote path (PULL). */
  repoPattern: string;
  /** A glob on tag names; "" or "*" is every tag. */
  tagPattern: string;
  /** Path prefix on the other side ("" for none). */
  destination: string;
}

/** One failure of a run, as the run records it. */
export interface ReplicationFailure {
  /** What failed: `<repo>:<tag>`, `<repo>@<digest>`, or the rule's remote for a listing. */
  reference: string;
  message: string;
}

/** Counters of a run; the copier adds to them as it goes. */
export interface ReplicationCounters {
  copiedManifests: number;
  copiedBlobs: number;
  copiedBytes: number;
  skippedBlobs: number;
}

/** Where the copier reports progress: called often; the run persists it (throttled) and feeds /metrics. */
export interface ReplicationProgress {
  /** Adds to the counters. */
  add(delta: Partial<ReplicationCounters>): void;
  /** Records a failure that did not stop the run (after the copier's own retries). */
  failed(failure: ReplicationFailure): void;
}

/** Copies one rule's matching content; idempotent: what the other side has is skipped. */
export interface ReplicationCopier {
  /**
   * Copies every matching tag (index with children, referrers, blobs the other side lacks, then
   * the tag). Resolves when done (failures recorded through `progress`); rejects only when the run
   * cannot proceed at all (e.g. the remote refuses every request), or with the signal's reason.
   */
  run(rule: ReplicationRuleConfig, progress: ReplicationProgress, signal: AbortSignal): Promise<void>;
}
