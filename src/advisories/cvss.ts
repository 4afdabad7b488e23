import cvss from "ae-cvss-calculator";
import type { SeverityRow } from "../storage/advisory-store.js";

const { Cvss2, Cvss3P0, Cvss3P1, Cvss4P0 } = cvss;

/** The severity types Wharf scores (OSV `severity[].type`). */
export type CvssType = "CVSS_V2" | "CVSS_V3" | "CVSS_V4";

/** The CVSS version implied by a vector's prefix, or undefined when the prefix does not fit `type`. */
function calculatorFor(type: string, vector: string) {
  if (type === "CVSS_V2") return vector.startsWith("CVSS:") ? undefined : new Cvss2(vector);
  if (type === "CVSS_V3") {
    if (vector.startsWith("CVSS:3.1/")) return new Cvss3P1(vector);
    if (vector.startsWith("CVSS:3.0/")) return new Cvss3P0(vector);
    return undefined;
  }
  if (type === "CVSS_V4") return vector.startsWith("CVSS:4.0/") ? new Cvss4P0(vector) : undefined;
  return undefined;
}

/** Qualitative rating of a base score (CVSS v3/v4 table; v2 has no `critical` or `none`). */
function levelOf(type: string, score: number): string {
  if (type === "CVSS_V2") return score >= 7 ? "high" : score >= 4 ? "medium" : "low";
  if (score === 0) return "none";
  if (score < 4) return "low";
  if (score < 7) return "medium";
  if (score < 9) return "high";
  return "critical";
}

/**
 * Scores a CVSS vector with ae-cvss-calculator. Returns the row, or a message saying why the
 * vector cannot be scored (unknown type, wrong version prefix, unknown or missing base metrics).
 */
export function scoreCvss(type: string, vector: string): SeverityRow | { error: string } {
  let base: number | undefined;
  try {
    const calculator = calculatorFor(type, vector);
    if (calculator === undefined) {
      return { error: `"${vector}" is not a ${type} vector (CVSS_V2, CVSS_V3 and CVSS_V4 are scored)` };
    }
    base = calculator.calculateScores().base;
  } catch (err) {
    return { error: `invalid ${type} vector "${vector}": ${(err as Error).message}` };
  }
  if (base === undefined || !Number.isFinite(base)) {
    return { error: `invalid ${type} vector "${vector}": base metrics are missing` };
  }
  return { type, vector, baseScore: base, level: levelOf(type, base) };
}
