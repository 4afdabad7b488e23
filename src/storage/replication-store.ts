import type { ListSlice, ListWindow } from "../core/list.js";
import type { CommonFilter } from "./common-filter.js";

/**
 * Replication rules, their runs and the ON_PUSH trigger's cursors (ADR 0054). Conventions are those
 * of store.ts (times in ms, undefined for missing).
 */

/** The outbox event type ON_PUSH rules fire on (the registry's `dev.wharf.registry.push.v1`). */
export const REPLICATION_TRIGGER_EVENT_TYPE = "dev.wharf.registry.push.v1";

export type ReplicationDirection = "PUSH" | "PULL";
export type ReplicationTrigger = "ON_PUSH" | "INTERVAL" | "MANUAL";
export type ReplicationRunState = "QUEUED" | "RUNNING" | "SUCCEEDED" | "FAILED";

export interface ReplicationRuleRow {
  /** `<organization uid>/<16 hex>`. */
  uid: string;
  /** The organization. */
  parentUid: string;
  name: string;
  direction: ReplicationDirection;
  remoteUrl: string;
  remoteUsername: string;
  /** Sealed with the SecretBox; "" for none. */
  remotePassword: string;
  repoPattern: string;
  tagPattern: string;
  destination: string;
  trigger: ReplicationTrigger;
  /** The interval as given ("30m"), "" unless INTERVAL. */
  interval: string;
  /** The interval in ms, 0 unless INTERVAL. */
  intervalMs: number;
  enabled: boolean;
  /** When the interval fires next; undefined unless an enabled INTERVAL rule. */
  nextRunTime?: number;
  createTime: number;
  updateTime: number;
}

/** One failure of a run. */
export interface ReplicationRunError {
  reference: string;
  message: string;
}

/** What a run has done so far. */
export interface ReplicationRunProgress {
  copiedManifests: number;
  copiedBlobs: number;
  copiedBytes: number;
  skippedBlobs: number;
  /** The first failures (the caller caps them). */
  errors: ReplicationRunError[];
  /** Failures beyond `errors`. */
  errorsOmitted: number;
}

export interface ReplicationRunRow extends ReplicationRunProgress {
  /** `<rule uid>/<16 hex>`. */
  uid: string;
  ruleUid: string;
  trigger: ReplicationTrigger;
  state: ReplicationRunState;
  /** When it was queued. */
  createTime: number;
  /** When it was (last) taken up; undefined while QUEUED. */
  startTime?: number;
  endTime?: number;
  /** The process running it ("" when none) and until when it may. */
  leaseOwner: string;
  leaseUntil: number;
}

/** A push event an ON_PUSH cursor has not passed yet. */
export interface ReplicationPushEvent {
  seq: number;
  /** The event's `data` (JSON `{actor, body}`; body has `repository` and `tag`). */
  data: string;
}

export interface ReplicationStore {
  getRule(uid: string): Promise<ReplicationRuleRow | undefined>;
  listRules(filter: CommonFilter, window: ListWindow): Promise<ListSlice<ReplicationRuleRow>>;
  /** The enabled ON_PUSH rules of an organization. */
  pushRules(orgUid: string): Promise<ReplicationRuleRow[]>;
  /** ALREADY_EXISTS when the organization has a rule of that name. */
  insertRule(row: ReplicationRuleRow): Promise<void>;
  /** Writes every mutable field; false when the rule does not exist. ALREADY_EXISTS on a taken name. */
  updateRule(row: ReplicationRuleRow): Promise<boolean>;
  /** Deletes the rule and its runs. */
  deleteRule(uid: string): Promise<boolean>;

  /**
   * Queues a run of `run.ruleUid` unless one is queued already (runs coalesce), and returns the
   * rule's queued run: this one or the one that was there.
   */
  enqueueRun(run: {
    uid: string;
    ruleUid: string;
    trigger: ReplicationTrigger;
    createTime: number;
  }): Promise<ReplicationRunRow>;
  /** Up to `limit` uids of enabled INTERVAL rules due at `now`. */
  dueRules(now: number, limit: number): Promise<string[]>;
  /**
   * Claims a due INTERVAL rule's firing: one conditional UPDATE moving `nextRunTime` one interval
   * past `now`, which succeeds for one caller only. True when this caller won.
   */
  claimDue(ruleUid: string, now: number): Promise<boolean>;
  /**
   * Takes one run to execute as `owner` until `leaseUntil`: first a RUNNING run whose lease ended
   * before `now` (its process died; it starts again from the start with zeroed progress), else the
   * oldest QUEUED run of a rule with no RUNNING run (it becomes RUNNING, `startTime` = now). One
   * conditional UPDATE each, so of several processes exactly one takes a run. Undefined when none.
   */
  claimRun(args: { owner: string; now: number; leaseUntil: number }): Promise<ReplicationRunRow | undefined>;
  /** Extends the lease while `owner` holds the RUNNING run; false when it no longer does. */
  renewLease(runUid: string, owner: string, leaseUntil: number): Promise<boolean>;
  /** Writes progress while `owner` holds the RUNNING run; false when it no longer does. */
  saveProgress(runUid: string, owner: string, progress: ReplicationRunProgress): Promise<boolean>;
  /** Ends the run `owner` holds with `state` (SUCCEEDED or FAILED); false when it no longer holds it. */
  finishRun(
    runUid: string,
    owner: string,
    outcome: ReplicationRunProgress & { state: "SUCCEEDED" | "FAILED"; endTime: number },
  ): Promise<boolean>;
  /** Gives the run back (lease ended now) so any process takes it over at once; a shutdown's. */
  releaseRun(runUid: string, owner: string): Promise<void>;
  getRun(uid: string): Promise<ReplicationRunRow | undefined>;
  /**
   * Runs newest first (create time, then uid, descending), of one rule or every rule within
   * `within`, after the run `after` (a run uid from a previous page), at most `limit + 1`; and the total.
   */
  listRuns(args: {
    ruleUid?: string;
    within?: CommonFilter["within"];
    after?: { createTime: number; uid: string };
    limit: number;
  }): Promise<{ rows: ReplicationRunRow[]; total: number }>;

  /**
   * Makes the push-trigger cursor of `orgUid` match its rules: present (starting after the newest
   * outbox event) when it has an enabled ON_PUSH rule, absent otherwise. Call in the transaction
   * that changes the rules. The outbox keeps push events of an organization with a cursor until
   * the cursor passes them.
   */
  syncPushCursor(orgUid: string): Promise<void>;
  /** Organizations with a push cursor. */
  pushCursorOrgs(): Promise<string[]>;
  /** The push events of `orgUid`'s subtree after its cursor, oldest first, at most `limit`; and the cursor. */
  pushEvents(
    orgUid: string,
    limit: number,
  ): Promise<{ cursor: number; events: ReplicationPushEvent[] } | undefined>;
  /**
   * Moves the cursor of `orgUid` from `from` to `to`; false when it is no longer at `from` (another
   * process moved it: the caller's transaction must roll back).
   */
  advancePushCursor(orgUid: string, from: number, to: number): Promise<boolean>;
}
