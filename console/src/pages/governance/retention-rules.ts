import type { registry } from "wharf/sdk";

/** One rule as the form edits it: every field text, as typed. */
export interface RuleDraft {
  repoPattern: string;
  tagPattern: string;
  keepLatest: string;
  keepPushedWithin: string;
  keepPulledWithin: string;
}

/** A blank rule. */
export const EMPTY_RULE: RuleDraft = {
  repoPattern: "",
  tagPattern: "",
  keepLatest: "",
  keepPushedWithin: "",
  keepPulledWithin: "",
};

/** A policy's rule as the form shows it. */
export function ruleDraft(rule: registry.RetentionRule): RuleDraft {
  return {
    repoPattern: rule.repoPattern,
    tagPattern: rule.tagPattern,
    keepLatest: rule.keepLatest > 0 ? String(rule.keepLatest) : "",
    keepPushedWithin: rule.keepPushedWithin,
    keepPulledWithin: rule.keepPulledWithin,
  };
}

/**
 * The rule a draft sends. `keepLatest` that is not a whole number is sent as -1, so that the
 * server's violation (not a silent 0) names the field.
 */
export function ruleFromDraft(draft: RuleDraft) {
  const latest = draft.keepLatest.trim();
  return {
    repoPattern: draft.repoPattern.trim(),
    tagPattern: draft.tagPattern.trim(),
    keepLatest: latest === "" ? 0 : /^\d+$/.test(latest) ? Number(latest) : -1,
    keepPushedWithin: draft.keepPushedWithin.trim(),
    keepPulledWithin: draft.keepPulledWithin.trim(),
  };
}

/** A rule in a line: `repo app/*, tags v*: keep latest 5, pushed within 720h`. */
export function describeRule(rule: registry.RetentionRule): string {
  const where = [
    rule.repoPattern && `repos ${rule.repoPattern}`,
    rule.tagPattern && `tags ${rule.tagPattern}`,
  ]
    .filter(Boolean)
    .join(", ");
  const keep = [
    rule.keepLatest > 0 && `latest ${rule.keepLatest}`,
    rule.keepPushedWithin && `pushed within ${rule.keepPushedWithin}`,
    rule.keepPulledWithin && `pulled within ${rule.keepPulledWithin}`,
  ]
    .filter(Boolean)
    .join(", ");
  return `${where || "all tags"}: keep ${keep || "nothing"}`;
}
