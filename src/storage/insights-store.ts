/**
 * The organization dashboard's aggregates (ADR 0064): pushes per day and the tags whose current
 * images have the most vulnerability matches, each computed by one bounded SQL query over a
 * group's uid range. Conventions are those of store.ts (times in ms since the epoch).
 */

/** Pushes on one UTC day. */
export interface DailyPushCount {
  /** The day's number since the epoch (ms / 86 400 000, rounded down). */
  epochDay: number;
  count: number;
}

/** A tag with its current image's newest current report and that report's matches by severity. */
export interface TagSeverityCounts {
  repoUid: string;
  tagName: string;
  digest: string;
  /** The newest current report (any scanner) of (repo, digest). */
  reportUid: string;
  critical: number;
  high: number;
  medium: number;
  low: number;
}

export interface InsightsStore {
  /**
   * Tag history records that point a tag at an image (not deletions) of the repos under group
   * `groupUid` (any depth) with `since <= updateTime < until`, counted per UTC day; days without
   * records are left out, the others ascend.
   */
  pushesPerDay(groupUid: string, since: number, until: number): Promise<DailyPushCount[]>;
  /**
   * The tags under group `groupUid` (any depth) whose image has a current report with matches,
   * each with the newest such report's matches counted by severity (all of them: VEX is applied by
   * the caller), worst first (critical, then high, medium, low; then repo uid and tag name), at
   * most `limit`.
   */
  tagSeverityCounts(groupUid: string, limit: number): Promise<TagSeverityCounts[]>;
}
