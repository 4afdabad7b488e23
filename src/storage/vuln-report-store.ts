import type { AccessScopes } from "../core/context.js";

/**
 * Stored vulnerability reports of image digests (ADR 0024). Conventions are those of store.ts
 * (times in ms since the epoch, undefined for missing rows).
 */

/** One CVSS score of a match. */
export interface VulnCvssRecord {
  score: number;
  version: string;
  vector: string;
  source: string;
}

/** One normalised (vulnerability, package) finding of a report. */
export interface VulnMatchRecord {
  vulnerabilityId: string;
  aliases: string[];
  /** UNKNOWN, NEGLIGIBLE, LOW, MEDIUM, HIGH or CRITICAL. */
  severity: string;
  cvss: VulnCvssRecord[];
  description: string;
  relatedUrls: string[];
  fixVersions: string[];
  /** UNKNOWN, FIXED, NOT_FIXED or WONT_FIX. */
  fixState: string;
  packageName: string;
  packageVersion: string;
  packageType: string;
  purl: string;
  locations: string[];
}

/** A stored report (its matches are read separately). */
export interface VulnReportRow {
  /** `<repo uid>/<16 hex>`. */
  uid: string;
  repoUid: string;
  /** The image (manifest) digest the report is about. */
  digest: string;
  /** GRYPE or TRIVY. */
  scanner: string;
  scannerVersion: string;
  dbBuildTime?: number;
  /** How the report arrived: bare, cosign-predicate, in-toto-statement, dsse-envelope. */
  envelope: string;
  /** Digest of the original bytes in blob storage. */
  rawDigest: string;
  rawSize: number;
  matchCount: number;
  createTime: number;
  /** True for the newest report of its (repo, digest, scanner); older ones are history. */
  current: boolean;
}

/** Which reports a list returns; every field narrows. */
export interface VulnReportFilter {
  within?: AccessScopes;
  repoUid?: string;
  /** Reports of any of these digests. */
  digests?: readonly string[];
  scanner?: string;
  /** createTime >= this. */
  createdSince?: number;
  /** Only current reports (no history). */
  currentOnly?: boolean;
}

export interface VulnReportStore {
  /**
   * Stores a report and its matches as the CURRENT report of (repoUid, digest, scanner): the
   * previous current one, if any, becomes history (it is kept). Records the raw bytes' blob row
   * (`rawDigest`, `rawSize`) when it is not known yet; the caller has written the bytes. NOT_FOUND
   * when the repo does not exist. Returns the stored row.
   */
  insert(row: Omit<VulnReportRow, "current">, matches: readonly VulnMatchRecord[]): Promise<VulnReportRow>;
  get(uid: string): Promise<VulnReportRow | undefined>;
  /**
   * The current report of `digest` in `repoUid`: of `scanner`, or of any scanner (the newest)
   * when `scanner` is undefined.
   */
  current(repoUid: string, digest: string, scanner?: string): Promise<VulnReportRow | undefined>;
  /** The reports matching `filter`, newest first (createTime, then uid), at most `limit`. */
  list(filter: VulnReportFilter, limit: number): Promise<VulnReportRow[]>;
  /** The report of `digest` by `scanner` created at exactly `createTime`, inside `within`. */
  find(args: {
    digest: string;
    scanner: string;
    createTime: number;
    within?: AccessScopes;
  }): Promise<VulnReportRow | undefined>;
  /** The matches of each report in `reportUids`, in report order (reports without matches map to []). */
  matches(reportUids: readonly string[]): Promise<Map<string, VulnMatchRecord[]>>;
}
