import type { ListSlice, ListWindow } from "../core/list.js";
import type { CommonFilter } from "./common-filter.js";

/** How a policy's failed rules act on a pull. */
export type PullPolicyMode = "ENFORCE" | "WARN";

/** The severities `denySeverity` takes, lowest first ("" is off). */
export type PolicySeverity = "" | "LOW" | "MEDIUM" | "HIGH" | "CRITICAL";

/**
 * Pull policies of the registry (migration 0024, ADR 0058): rules every manifest GET/HEAD beneath
 * the policy's parent (an organization, folder or repo) is evaluated against. Conventions are those
 * of store.ts (times in ms, undefined for missing).
 */
export interface PullPolicyRow {
  /** `<parent uid>/<16 hex>`. */
  uid: string;
  /** The group or repo the policy is under. */
  parentUid: string;
  /** Unique within the parent. */
  name: string;
  mode: PullPolicyMode;
  requireSignature: boolean;
  /** "" when the rule is off. */
  denySeverity: PolicySeverity;
  onlyFixable: boolean;
  denyEol: boolean;
  requireSbom: boolean;
  /** Identity uids the policy never applies to. */
  exemptIdentities: string[];
  createTime: number;
  updateTime: number;
}

export type PullPolicyFilter = CommonFilter;

export interface PullPolicyStore {
  get(uid: string): Promise<PullPolicyRow | undefined>;
  list(filter: PullPolicyFilter, window: ListWindow): Promise<ListSlice<PullPolicyRow>>;
  /** Every policy, in one read (the evaluator's whole table; a few per organization). */
  all(): Promise<PullPolicyRow[]>;
  /** ALREADY_EXISTS when the parent already has a policy of the same name. */
  insert(row: PullPolicyRow): Promise<void>;
  /**
   * Writes every field but uid, parent and createTime; false when the policy does not exist;
   * ALREADY_EXISTS when renamed to a name its parent already has.
   */
  update(row: PullPolicyRow): Promise<boolean>;
  /** Deletes the policy; false when it did not exist. (A deleted group's or repo's policies go with it.) */
  delete(uid: string): Promise<boolean>;
}
