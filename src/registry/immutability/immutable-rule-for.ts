import { selfAndAncestors } from "../../core/uidp.js";
import type { ImmutabilityRuleRow } from "../../storage/immutability-store.js";
import type { Store } from "../../storage/store.js";
import { patternListMatcher } from "../tag-patterns.js";

/**
 * The immutability rule that protects tag `tagName` of the repo `repoUid`, or undefined when none
 * does: the first rule at the repo or one of its ancestors (the repo's uid is a uidp, so its
 * ancestors are its prefixes) whose `tagPatterns` match the name, the nearest parent first, then
 * the oldest rule. One indexed read of `tx` (pass the transaction that moves or deletes the tag, so
 * the answer and the write agree). A protected tag, once it exists, never moves and is never
 * deleted (ADR 0045); retention keeps it.
 */
export async function immutableRuleFor(
  tx: Pick<Store, "immutabilityRules">,
  repoUid: string,
  tagName: string,
): Promise<{ uid: string } | undefined> {
  const rules = await tx.immutabilityRules.ofParents(selfAndAncestors(repoUid));
  const rule = firstMatching(rules, tagName);
  return rule && { uid: rule.uid };
}

/** The first of `rules` (already in precedence order) whose patterns match `tagName`. */
export function firstMatching(
  rules: readonly ImmutabilityRuleRow[],
  tagName: string,
): ImmutabilityRuleRow | undefined {
  return rules.find((rule) => patternListMatcher(rule.tagPatterns)(tagName));
}
