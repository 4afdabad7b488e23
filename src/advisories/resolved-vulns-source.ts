import type { SeverityRow } from "../storage/advisory-store.js";

/** One vulnerability that disappeared from an image on a day. */
export interface ResolvedVulnerability {
  /** The advisory id (CGA-…) when an advisory names it, else the upstream id. */
  id: string;
  aliases: string[];
  severities: SeverityRow[];
}

/** The vulnerabilities resolved on one UTC day. */
export interface ResolvedDay {
  /** The day's first millisecond (00:00 UTC). */
  day: number;
  vulnerabilities: ResolvedVulnerability[];
}

/** What ResolvedVulns asks about one image. */
export interface ResolvedVulnsQuery {
  repoUid: string;
  /** Tag names (at least one). */
  tags: string[];
  /** First and last day reported, as 00:00 UTC in ms; `lastDay` inclusive. */
  firstDay: number;
  lastDay: number;
}

/**
 * Where SecurityAdvisoryService.ResolvedVulns gets its data: for a repo's tags and a day range,
 * the vulnerabilities whose findings disappeared, per day (days without any may be left out). Built
 * from vulnerability reports and tag history by the vulnerability-report side.
 */
export interface ResolvedVulnsSource {
  resolvedVulns(query: ResolvedVulnsQuery, signal: AbortSignal): Promise<ResolvedDay[]>;
}
