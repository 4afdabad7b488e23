import type { AccessScopes } from "../core/context.js";
import type { ListSlice, ListWindow, UidpFilter } from "../core/list.js";
import type { PutOutcome } from "./library-store.js";
import type { TagRow } from "./registry-store.js";

/**
 * End-of-life data (ADR 0031, `wharf import eol`): the release cycles of products as endoflife.date
 * publishes them, and rules mapping an organization's repo and tag glob to a product. Cycles are
 * global; rules belong to an organization. Dates are ms at 00:00 UTC of the day; absent when the
 * data has none.
 */

/** One release cycle of a product (`3.10` of `python`). */
export interface EolCycleRow {
  product: string;
  /** The cycle's name, matched as a prefix of tag names (`3.10`). */
  cycle: string;
  /** "" when none. */
  codename: string;
  releaseDate?: number;
  /** The first day the cycle is end-of-life; absent when unknown or not planned. */
  eolDate?: number;
  /** The data declares the cycle end-of-life but gives no date (only meaningful without eolDate). */
  eolUndated: boolean;
  lts: boolean;
  /** The day the cycle became LTS, when the data says. */
  ltsFrom?: number;
  /** "" when the data names none. */
  latestVersion: string;
  latestReleaseDate?: number;
  /** End of active support. */
  supportEndDate?: number;
  /** End of extended (paid) support. */
  extendedSupportEndDate?: number;
}

/** Tags named like `tagGlob` (`*` any run, `?` one character) in repos named `repoName` under `orgUid` follow `product`. */
export interface EolRuleRow {
  /** A group uid: the rule applies to repos named `repoName` anywhere beneath it. */
  orgUid: string;
  repoName: string;
  /** Tag-name characters plus `*` and `?`. */
  tagGlob: string;
  product: string;
  createTime: number;
}

/** A rule as it applies to one repo: the rule and the uid of a repo it covers. */
export interface EolRepoRule extends EolRuleRow {
  repoUid: string;
}

/** Which tags ListEolTags considers: those some rule's glob matches, narrowed by these. */
export interface EolTagFilter {
  uidp?: UidpFilter;
  within?: AccessScopes;
  /** Exact tag name. */
  name?: string;
  /** Leave out tags ending in `-20yymmdd` (date-stamped builds). */
  excludeDates?: boolean;
  /** Leave out tags ending in `-r<digits>` (epoch builds). */
  excludeEpochs?: boolean;
}

export interface EolStore {
  /**
   * Inserts the cycle or replaces its fields (key: product and cycle); `unchanged` when it is
   * stored exactly so.
   */
  putCycle(row: EolCycleRow): Promise<PutOutcome>;
  /** Every cycle of the named products, in no particular order. */
  cycles(products: readonly string[]): Promise<EolCycleRow[]>;
  /**
   * Inserts the rule, or points an existing rule of the same (orgUid, repoName, tagGlob) at
   * `product` (`updated`; its createTime is kept); `unchanged` when it already names it.
   */
  putRule(row: EolRuleRow): Promise<PutOutcome>;
  /** Every rule of the organization `orgUid`, by repo name then glob. */
  rulesOf(orgUid: string): Promise<EolRuleRow[]>;
  /**
   * The rules covering each of `repoUids`: same repo name, and the repo beneath the rule's orgUid.
   * A repo may have several rules (different globs); which one a tag follows is the caller's choice.
   */
  rulesForRepos(repoUids: readonly string[]): Promise<EolRepoRule[]>;
}

/** The EOL store with its list of rule-matched tags (it answers the registry's TagRows). */
export interface EolTagStore extends EolStore {
  /**
   * Tags some rule matches (its repo covered and the tag's name like its glob), filtered; ordered
   * and windowed like every store list (sort fields of tags).
   */
  listTags(filter: EolTagFilter, window: ListWindow): Promise<ListSlice<TagRow>>;
}
