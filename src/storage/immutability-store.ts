import type { ListSlice, ListWindow } from "../core/list.js";
import type { CommonFilter } from "./common-filter.js";

/**
 * Immutability rules of the registry (ADR 0045): tag patterns under an organization, folder or repo
 * (`parentUid`). Conventions are those of store.ts (times in ms, undefined for missing).
 */
export interface ImmutabilityRuleRow {
  /** `<parent uid>/<16 hex>`. */
  uid: string;
  /** The group or repo the rule is under. */
  parentUid: string;
  /** Globs of src/registry/tag-patterns.ts; a leading `!` excludes. */
  tagPatterns: string[];
  description: string;
  createTime: number;
  updateTime: number;
}

export type ImmutabilityRuleFilter = CommonFilter;

export interface ImmutabilityRuleStore {
  get(uid: string): Promise<ImmutabilityRuleRow | undefined>;
  list(filter: ImmutabilityRuleFilter, window: ListWindow): Promise<ListSlice<ImmutabilityRuleRow>>;
  /**
   * The rules whose parent is one of `parentUids` (a repo and its ancestors), in one indexed read,
   * nearest parent first (the longest uid), then oldest first (create time, then uid).
   */
  ofParents(parentUids: readonly string[]): Promise<ImmutabilityRuleRow[]>;
  insert(row: ImmutabilityRuleRow): Promise<void>;
  /** Writes patterns, description and updateTime; false when the rule does not exist. */
  update(row: ImmutabilityRuleRow): Promise<boolean>;
  /** Deletes the rule; false when it did not exist. (A deleted group's or repo's rules go with it.) */
  delete(uid: string): Promise<boolean>;
}
