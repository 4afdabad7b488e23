/** Severity of a vulnerability, as the v1 API spells it (Grype's `Negligible` included). */
export type VulnSeverity = "UNKNOWN" | "NEGLIGIBLE" | "LOW" | "MEDIUM" | "HIGH" | "CRITICAL";

/** Every severity, least to most severe (the order counts and lists use). */
export const SEVERITIES: readonly VulnSeverity[] = [
  "UNKNOWN",
  "NEGLIGIBLE",
  "LOW",
  "MEDIUM",
  "HIGH",
  "CRITICAL",
];

/** Whether and how a vulnerability is fixed upstream of the scanned package. */
export type FixState = "UNKNOWN" | "FIXED" | "NOT_FIXED" | "WONT_FIX";

/** The scanners whose reports Wharf reads. */
export type ScannerName = "GRYPE" | "TRIVY";

/** One CVSS score a report gives for a vulnerability. */
export interface CvssScore {
  /** Base score, 0–10. */
  score: number;
  /** CVSS version, e.g. "3.1", "2.0". */
  version: string;
  /** The vector string, "" when the report gave none. */
  vector: string;
  /** Who scored it (nvd, redhat, ghsa, …), "" when unknown. */
  source: string;
}

/** One (vulnerability, package) finding of a report, normalised across scanners. */
export interface VulnMatch {
  vulnerabilityId: string;
  /** Other ids of the same vulnerability (a GHSA's CVE, …), without the id itself. */
  aliases: string[];
  severity: VulnSeverity;
  cvss: CvssScore[];
  description: string;
  relatedUrls: string[];
  fixVersions: string[];
  fixState: FixState;
  packageName: string;
  packageVersion: string;
  /** Package ecosystem as the scanner names it (apk, go-module, gobinary, java-archive, …). */
  packageType: string;
  purl: string;
  /** File paths where the package was found. */
  locations: string[];
}

/** Which scanner produced a report, with what version and vulnerability database. */
export interface ScannerInfo {
  name: ScannerName;
  /** "" when the report does not say. */
  version: string;
  /** Build time of the scanner's vulnerability database (ms since the epoch), when the report says. */
  dbBuildTime?: number;
}

/** How the scanner output reached Wharf. */
export type ReportEnvelope = "bare" | "cosign-predicate" | "in-toto-statement" | "dsse-envelope";

/** A parsed report: the scanner and every match, in report order. */
export interface NormalizedReport {
  scanner: ScannerInfo;
  envelope: ReportEnvelope;
  matches: VulnMatch[];
}
