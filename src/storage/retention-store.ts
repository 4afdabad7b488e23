import type { ListSlice, ListWindow } from "../core/list.js";
import type { CommonFilter } from "./common-filter.js";

/**
 * Retention policies and the pull times they read (ADR 0046). Conventions are those of store.ts
 * (times in ms, undefined for missing).
 */

/** One rule as stored (the API's RetentionRule; durations already in ms, 0 for none). */
export interface RetentionRuleData {
  repoPattern: string;
  tagPattern: string;
  keepLatest: number;
  /** The duration text as given ("720h"), "" for none. */
  keepPushedWithin: string;
  keepPulledWithin: string;
}

/** The summary of one run (the tags it removed are in its answer only). */
export interface RetentionRunSummary {
  uid: string;
  startTime: number;
  endTime: number;
  deletedTags: number;
  scheduled: boolean;
}

export interface RetentionPolicyRow {
  /** `<parent uid>/<16 hex>`. */
  uid: string;
  /** The organization, folder or repo the policy is under. */
  parentUid: string;
  description: string;
  rules: RetentionRuleData[];
  /** "" (manual) or the interval as given ("24h"). */
  schedule: string;
  /** The interval in ms, 0 for manual. */
  scheduleMs: number;
  /** When the schedule runs the policy next; undefined for manual policies. */
  nextRunTime?: number;
  lastRun?: RetentionRunSummary;
  createTime: number;
  updateTime: number;
}

/** A tag under a policy's parent, with what retention decides on. */
export interface RetentionCandidate {
  uid: string;
  repoUid: string;
  name: string;
  digest: string;
  /** When the tag was last pointed at its digest (its newest history record). */
  pushTime: number;
  /** Its last recorded pull, undefined when none was recorded. */
  pullTime?: number;
}

/** One coalesced pull: of a tag by name, or of every tag of the repo pointing at a digest. */
export type TagPull = { repoUid: string; time: number } & ({ tag: string } | { digest: string });

export interface RetentionStore {
  get(uid: string): Promise<RetentionPolicyRow | undefined>;
  list(filter: CommonFilter, window: ListWindow): Promise<ListSlice<RetentionPolicyRow>>;
  insert(row: RetentionPolicyRow): Promise<void>;
  /** Writes description, rules, schedule and nextRunTime; false when the policy does not exist. */
  update(row: RetentionPolicyRow): Promise<boolean>;
  delete(uid: string): Promise<boolean>;
  /**
   * Claims the right to run policy `uid` until `leaseUntil`: one conditional UPDATE that succeeds
   * only when no other run holds it (its lease is in the past at `now`). With `scheduled`, it also
   * needs the policy to be due (nextRunTime ≤ now) and moves nextRunTime one interval past `now`.
   * True when this caller won the claim.
   */
  claimRun(uid: string, args: { now: number; leaseUntil: number; scheduled: boolean }): Promise<boolean>;
  /** Up to `limit` uids of scheduled policies due at `now` whose run is not leased. */
  due(now: number, limit: number): Promise<string[]>;
  /** Records the run's summary and releases the lease. */
  finishRun(uid: string, summary: RetentionRunSummary): Promise<void>;
  /** Releases the lease without a summary (a run that failed). */
  releaseRun(uid: string): Promise<void>;
  /** Every tag under `parentUid` (a group or a repo), with push and pull times. */
  candidates(parentUid: string): Promise<RetentionCandidate[]>;
  /**
   * Records pulls (newer times win; a pull by digest marks every tag of the repo then pointing at
   * it), in one transaction. Pulls of repos that no longer exist are ignored.
   */
  recordPulls(pulls: readonly TagPull[]): Promise<void>;
}
