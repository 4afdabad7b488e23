/**
 * axe-core accessibility checks for the console's Chromium tests:
 *
 * ```ts
 * import { assertAccessible } from "../support/axe.js";
 * await page.goto(`${wharf.apiUrl}/governance/quotas`);
 * await page.getByRole("heading", { name: "Quotas" }).waitFor();
 * await assertAccessible(page, "quotas page");
 * ```
 *
 * Runs axe (WCAG 2.0/2.1 A and AA rules plus best practices) on the page as it is rendered now and
 * fails on any violation of impact `serious` or `critical`, naming each rule and the first few
 * offending elements. Call it once the page's data has loaded, in the light and (via
 * `page.emulateMedia({ colorScheme: "dark" })`) the dark theme where colours matter.
 */
import assert from "node:assert/strict";
import { AxeBuilder } from "@axe-core/playwright";
import type { Page } from "playwright-core";

/** The axe rule tags checked: WCAG 2.x A and AA, and axe's best practices. */
export const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] as const;

/** One violation that fails the check: rule id, impact, help text and offending selectors. */
export interface SeriousViolation {
  rule: string;
  impact: string;
  help: string;
  targets: string[];
}

/** The serious and critical axe violations on `page` now (empty: none). */
export async function seriousViolations(page: Page): Promise<SeriousViolation[]> {
  const results = await new AxeBuilder({ page }).withTags([...AXE_TAGS]).analyze();
  return results.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => ({
      rule: v.id,
      impact: v.impact ?? "",
      help: v.help,
      targets: v.nodes.slice(0, 5).map((n) => n.target.join(" ")),
    }));
}

/** Fails (assert) when `page` has any serious or critical axe violation; `label` names the page. */
export async function assertAccessible(page: Page, label: string): Promise<void> {
  const violations = await seriousViolations(page);
  assert.deepEqual(
    violations,
    [],
    `${label}: ${violations.length} serious/critical accessibility violation(s):\n${violations
      .map((v) => `- ${v.rule} (${v.impact}): ${v.help}\n    ${v.targets.join("\n    ")}`)
      .join("\n")}`,
  );
}
