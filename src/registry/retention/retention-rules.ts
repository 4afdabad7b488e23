import { parseDurationSeconds } from "../../core/duration.js";
import { invalidArgument } from "../../core/errors.js";
import type { RetentionRuleData } from "../../storage/retention-store.js";
import { globMatcher, patternProblem } from "../tag-patterns.js";

/** Most rules one policy holds. */
export const MAX_RETENTION_RULES = 20;
/** Most tags `keepLatest` may keep per repo. */
export const MAX_KEEP_LATEST = 10_000;
/** The shortest schedule interval: a run lists every tag under the parent, so not more often. */
export const MIN_SCHEDULE_MS = 60_000;
/** The longest schedule interval (a year). */
export const MAX_SCHEDULE_MS = 366 * 86_400_000;

/** What a RetentionRule of a request holds (the generated message satisfies it). */
export interface RetentionRuleInput {
  repoPattern: string;
  tagPattern: string;
  keepLatest: number;
  keepPushedWithin: string;
  keepPulledWithin: string;
}

/** A duration of a rule ("720h") in ms, or INVALID_ARGUMENT naming `field`; "" is 0 (none). */
function durationMs(field: string, value: string): number {
  if (value === "") return 0;
  const seconds = /^\d+[smhd]$/.test(value) ? parseDurationSeconds(value) : undefined;
  if (seconds === undefined) {
    throw invalidArgument(
      field,
      `"${value}" is not a duration: a positive integer and a unit s, m, h or d ("720h")`,
    );
  }
  return seconds * 1000;
}

/**
 * The rules of a request as stored, or INVALID_ARGUMENT naming the first bad field
 * (`rules[1].keepPushedWithin`). A policy needs 1 to MAX_RETENTION_RULES rules; a rule must keep
 * something (keepLatest > 0 or a duration); patterns are globs of src/registry/tag-patterns.ts
 * without `!`; on a repo (`parentIsRepo`) repoPattern must be empty (there is no path below it).
 */
export function validateRules(
  rules: readonly RetentionRuleInput[],
  parentIsRepo: boolean,
): RetentionRuleData[] {
  if (rules.length === 0) {
    throw invalidArgument(
      "rules",
      "a policy needs at least one rule (a policy without rules would remove every tag)",
    );
  }
  if (rules.length > MAX_RETENTION_RULES) {
    throw invalidArgument("rules", `a policy holds at most ${MAX_RETENTION_RULES} rules`);
  }
  return rules.map((rule, i) => {
    const at = `rules[${i}]`;
    if (rule.repoPattern !== "") {
      if (parentIsRepo) {
        throw invalidArgument(
          `${at}.repoPattern`,
          "must be empty on a policy of a repo (there is no repo path below it)",
        );
      }
      const problem = patternProblem(rule.repoPattern, "repo", false);
      if (problem) throw invalidArgument(`${at}.repoPattern`, problem);
    }
    if (rule.tagPattern !== "") {
      const problem = patternProblem(rule.tagPattern, "tag", false);
      if (problem) throw invalidArgument(`${at}.tagPattern`, problem);
    }
    if (!Number.isInteger(rule.keepLatest) || rule.keepLatest < 0 || rule.keepLatest > MAX_KEEP_LATEST) {
      throw invalidArgument(`${at}.keepLatest`, `must be 0 to ${MAX_KEEP_LATEST}`);
    }
    durationMs(`${at}.keepPushedWithin`, rule.keepPushedWithin);
    durationMs(`${at}.keepPulledWithin`, rule.keepPulledWithin);
    if (rule.keepLatest === 0 && rule.keepPushedWithin === "" && rule.keepPulledWithin === "") {
      throw invalidArgument(
        at,
        "a rule must keep something: set keepLatest, keepPushedWithin or keepPulledWithin",
      );
    }
    return {
      repoPattern: rule.repoPattern,
      tagPattern: rule.tagPattern,
      keepLatest: rule.keepLatest,
      keepPushedWithin: rule.keepPushedWithin,
      keepPulledWithin: rule.keepPulledWithin,
    };
  });
}

/**
 * The interval of a schedule in ms: 0 for "" (manual runs only), else MIN_SCHEDULE_MS to
 * MAX_SCHEDULE_MS, or INVALID_ARGUMENT on `schedule`.
 */
export function scheduleMs(schedule: string): number {
  if (schedule === "") return 0;
  const ms = durationMs("schedule", schedule);
  if (ms < MIN_SCHEDULE_MS || ms > MAX_SCHEDULE_MS) {
    throw invalidArgument(
      "schedule",
      `must be "" (manual) or an interval from 1m to 366d (got "${schedule}")`,
    );
  }
  return ms;
}

/** A tag as retention judges it: where it is, and when it was last pushed and pulled. */
export interface JudgedTag {
  uid: string;
  repoUid: string;
  /** The repo's path below the policy's parent ("" when the policy is on the repo itself). */
  repoPath: string;
  name: string;
  digest: string;
  pushTime: number;
  pullTime?: number | undefined;
}

/** A tag no rule keeps, and why. */
export interface Removal {
  tag: JudgedTag;
  reason: string;
}

interface CompiledRule {
  repo: (path: string) => boolean;
  tag: (name: string) => boolean;
  keepLatest: number;
  pushedWithinMs: number;
  pulledWithinMs: number;
}

function compile(rule: RetentionRuleData): CompiledRule {
  const any = () => true;
  return {
    repo: rule.repoPattern === "" ? any : globMatcher(rule.repoPattern),
    tag: rule.tagPattern === "" ? any : globMatcher(rule.tagPattern),
    keepLatest: rule.keepLatest,
    pushedWithinMs: durationMs("keepPushedWithin", rule.keepPushedWithin),
    pulledWithinMs: durationMs("keepPulledWithin", rule.keepPulledWithin),
  };
}

/** Newest push first; the same push time: by name (so keepLatest is deterministic). */
function byPushDesc(a: JudgedTag, b: JudgedTag): number {
  return b.pushTime - a.pushTime || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * Harbor's semantics: a tag is kept when ANY rule keeps it, and every other tag is removed. A rule
 * keeps a tag in a repo matching its repoPattern, with a name matching its tagPattern, when the
 * tag is among the rule's `keepLatest` most recently pushed such tags of that repo, or was pushed
 * within `keepPushedWithin` of `now`, or pulled within `keepPulledWithin` (a rule's criteria are
 * alternatives). `protectedTag` keeps a tag whatever the rules say (immutable tags). Removals are
 * ordered by repo path then tag name.
 */
export function tagsToRemove(
  rules: readonly RetentionRuleData[],
  tags: readonly JudgedTag[],
  now: number,
  protectedTag: (tag: JudgedTag) => boolean = () => false,
): Removal[] {
  const compiled = rules.map(compile);
  const kept = new Set<string>();
  const matchedBy = new Map<string, number>();
  for (const rule of compiled) {
    const byRepo = new Map<string, JudgedTag[]>();
    for (const tag of tags) {
      if (!rule.repo(tag.repoPath) || !rule.tag(tag.name)) continue;
      matchedBy.set(tag.uid, (matchedBy.get(tag.uid) ?? 0) + 1);
      const list = byRepo.get(tag.repoUid) ?? [];
      list.push(tag);
      byRepo.set(tag.repoUid, list);
      if (rule.pushedWithinMs > 0 && tag.pushTime >= now - rule.pushedWithinMs) kept.add(tag.uid);
      if (
        rule.pulledWithinMs > 0 &&
        tag.pullTime !== undefined &&
        tag.pullTime >= now - rule.pulledWithinMs
      ) {
        kept.add(tag.uid);
      }
    }
    if (rule.keepLatest > 0) {
      for (const list of byRepo.values()) {
        for (const tag of list.sort(byPushDesc).slice(0, rule.keepLatest)) kept.add(tag.uid);
      }
    }
  }
  return tags
    .filter((tag) => !kept.has(tag.uid) && !protectedTag(tag))
    .sort((a, b) => compareText(a.repoPath, b.repoPath) || compareText(a.name, b.name))
    .map((tag) => ({ tag, reason: reasonFor(tag, matchedBy.get(tag.uid) ?? 0) }));
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function reasonFor(tag: JudgedTag, matchingRules: number): string {
  const pushed = `pushed ${new Date(tag.pushTime).toISOString()}`;
  const pulled =
    tag.pullTime === undefined ? "no pull recorded" : `last pulled ${new Date(tag.pullTime).toISOString()}`;
  const which =
    matchingRules === 0
      ? "no rule matches its repo and tag name"
      : `${matchingRules === 1 ? "the 1 rule" : `the ${matchingRules} rules`} matching it keep${matchingRules === 1 ? "s" : ""} it neither by count nor by age`;
  return `${which} (${pushed}, ${pulled})`;
}
