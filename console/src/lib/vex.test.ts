import { describe, expect, it } from "vitest";
import { splitBySuppression, vexNote } from "./vex";
import type { VulnMatch } from "./vuln-filter";

function match(id: string, suppressed: boolean, status = "", justification = ""): VulnMatch {
  return {
    vulnerability: { id },
    suppressed,
    ...(status ? { vex: { status, justification } } : {}),
  } as unknown as VulnMatch;
}

describe("VEX suppression", () => {
  it("keeps suppressed matches apart from those that count", () => {
    const split = splitBySuppression([
      match("CVE-1", false),
      match("CVE-2", true, "not_affected"),
      match("CVE-3", false, "affected"),
    ]);
    expect(split.active.map((m) => m.vulnerability?.id)).toEqual(["CVE-1", "CVE-3"]);
    expect(split.suppressed.map((m) => m.vulnerability?.id)).toEqual(["CVE-2"]);
  });

  it("reads the deciding statement's status and justification", () => {
    expect(vexNote(match("CVE-2", true, "not_affected", "vulnerable_code_not_present"))).toBe(
      "not affected: vulnerable code not present",
    );
    expect(vexNote(match("CVE-3", true, "fixed"))).toBe("fixed");
    expect(vexNote(match("CVE-4", false))).toBe("");
  });
});
