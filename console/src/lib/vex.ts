import type { VulnMatch } from "./vuln-filter";

/** A report's matches split by VEX: those that count, and those a VEX statement suppresses. */
export interface VexSplit {
  active: VulnMatch[];
  suppressed: VulnMatch[];
}

/** Splits `matches` into the unsuppressed ones (counted, shown) and the VEX-suppressed ones. */
export function splitBySuppression(matches: readonly VulnMatch[]): VexSplit {
  const active: VulnMatch[] = [];
  const suppressed: VulnMatch[] = [];
  for (const m of matches) (m.suppressed ? suppressed : active).push(m);
  return { active, suppressed };
}

/**
 * How the VEX statement deciding `match` reads: `not_affected: vulnerable_code_not_present`,
 * `fixed`, or "" when no statement is about it. Underscores of the OpenVEX labels become spaces.
 */
export function vexNote(match: VulnMatch): string {
  const vex = match.vex;
  if (!vex?.status) return "";
  const words = (label: string) => label.replaceAll("_", " ");
  return vex.justification ? `${words(vex.status)}: ${words(vex.justification)}` : words(vex.status);
}
