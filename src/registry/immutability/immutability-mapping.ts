import { toTimestamp } from "../../core/api-convert.js";
import { invalidArgument } from "../../core/errors.js";
import type { ImmutabilityRule } from "../../gen/platform/registry/v2/immutability_pb.js";
import type { ImmutabilityRuleRow } from "../../storage/immutability-store.js";
import { patternProblem } from "../tag-patterns.js";

/** Most patterns one rule holds. */
export const MAX_TAG_PATTERNS = 50;

/** The API message of a stored rule. */
export function immutabilityRuleMessage(row: ImmutabilityRuleRow): ImmutabilityRule {
  return {
    $typeName: "platform.registry.v2.ImmutabilityRule",
    uid: row.uid,
    tagPatterns: [...row.tagPatterns],
    description: row.description,
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
  };
}

/**
 * Checks a rule's tag patterns: 1 to MAX_TAG_PATTERNS, each a valid tag glob of tag-patterns.ts
 * (a leading `!` excludes); INVALID_ARGUMENT on `tag_patterns` or `tag_patterns[i]` otherwise.
 */
export function validateTagPatterns(patterns: readonly string[]): void {
  if (patterns.length === 0) throw invalidArgument("tag_patterns", "at least one pattern is required");
  if (patterns.length > MAX_TAG_PATTERNS) {
    throw invalidArgument("tag_patterns", `at most ${MAX_TAG_PATTERNS} patterns`);
  }
  patterns.forEach((pattern, i) => {
    const problem = patternProblem(pattern, "tag", true);
    if (problem !== undefined) throw invalidArgument(`tag_patterns[${i}]`, problem);
  });
}
