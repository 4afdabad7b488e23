import type { VulnSeverity } from "../report-model.js";

const KNOWN = new Set<string>(["NEGLIGIBLE", "LOW", "MEDIUM", "HIGH", "CRITICAL"]);

/** A scanner's severity word (`High`, `CRITICAL`, `Negligible`, …) as a VulnSeverity; UNKNOWN otherwise. */
export function normalizeSeverity(word: string): VulnSeverity {
  const upper = word.trim().toUpperCase();
  return KNOWN.has(upper) ? (upper as VulnSeverity) : "UNKNOWN";
}
