import type { AccessScopes } from "../core/context.js";
import type { ListSlice, ListWindow, UidpFilter } from "../core/list.js";

/** The kinds of advisory event (the YAML spelling of wolfictl's v2 schema, plus the API's `patched`). */
export type AdvisoryEventType =
  | "detection"
  | "true-positive-determination"
  | "fixed"
  | "false-positive-determination"
  | "analysis-not-planned"
  | "fix-not-planned"
  | "pending-upstream-fix"
  | "patched";

/** Every AdvisoryEventType, in the API enum's order. */
export const ADVISORY_EVENT_TYPES: readonly AdvisoryEventType[] = [
  "detection",
  "true-positive-determination",
  "fixed",
  "false-positive-determination",
  "analysis-not-planned",
  "fix-not-planned",
  "pending-upstream-fix",
  "patched",
];

/** Review state of an event; imported events are `approved`. */
export type ReviewState = "pending" | "approved" | "request-changes" | "rejected";

/** One event of an advisory's history. */
export interface AdvisoryEventRow {
  /** `<advisory uid>/<16 hex>`, derived from the event's content so re-imports keep it. */
  uid: string;
  /** Milliseconds since the epoch. */
  time: number;
  type: AdvisoryEventType;
  author: string;
  reviewer: string;
  reviewState: ReviewState;
  issue: string;
  /**
   * The type's payload with the API's camelCase keys (e.g. `{fixedVersion}`; a detection's
   * `{type: "scan/v1", scan: {...}}`); JSON-able.
   */
  data: Record<string, unknown>;
}

/** A CVSS vector of an advisory or of vulnerability metadata, with what it computes to. */
export interface SeverityRow {
  /** `CVSS_V2`, `CVSS_V3` or `CVSS_V4`. */
  type: string;
  /** The vector string. */
  vector: string;
  /** Base score, 0–10. */
  baseScore: number;
  /** `none`, `low`, `medium`, `high` or `critical`. */
  level: string;
}

/** One advisory: one (source record × affected package). */
export interface AdvisoryRow {
  /** sha1 hex of `wharf:advisory:<advisoryId>/<artifactName>` (ADR 0025). */
  uid: string;
  /** `<PREFIX>-xxxx-xxxx-xxxx`. */
  advisoryId: string;
  /** The source's own id when it was not CGA-shaped, else "". */
  legacyAdvisoryId: string;
  author: string;
  artifactName: string;
  /** `apk`, `library`, `image`. */
  artifactType: string;
  artifactArchitecture: string;
  componentName: string;
  componentType: string;
  componentLocation: string;
  /** The origin package this artifact is built from (itself, or the origin of a subpackage). */
  originPackage: string;
  /** Where the package lives (`wolfi`, `chainguard`, or the OSV ecosystem lower-cased). */
  packageNamespace: string;
  /** Upstream ids (CVE, GHSA, …), unique, in source order. */
  aliases: string[];
  /** Oldest first. */
  events: AdvisoryEventRow[];
  severities: SeverityRow[];
  /** Raw JSON the API has no field for (OSV `affected` entry), or "". */
  findings: string;
  createTime: number;
  updateTime: number;
  /** Set when the source withdrew the advisory. */
  deleteTime?: number;
}

/** Filters of ListAdvisories; every array is "any of" and absent/empty means no filter. */
export interface AdvisoryFilter {
  uidp?: UidpFilter;
  /** Advisories are root-level rows: only an empty scope list (nothing visible) restricts them. */
  within?: AccessScopes;
  advisoryIds?: string[];
  legacyAdvisoryIds?: string[];
  artifactNames?: string[];
  artifactTypes?: string[];
  artifactArchitectures?: string[];
  componentNames?: string[];
  componentTypes?: string[];
  componentLocations?: string[];
  aliases?: string[];
  /** Advisories of this origin package and all its subpackages (replaces artifactNames). */
  origin?: string;
  /** Advisories with at least one event matching each set event criterion. */
  eventReviewStates?: ReviewState[];
  eventAuthors?: string[];
  excludeEventAuthors?: string[];
  eventReviewers?: string[];
  eventTypes?: AdvisoryEventType[];
  /** The type of the most recent approved event. */
  latestEventType?: AdvisoryEventType;
  /** Case-insensitive substring of the artifact name, component name or an alias. */
  query?: string;
  /** Include withdrawn advisories. */
  showDeleted?: boolean;
}

/** What an upsert did to one row. */
export type UpsertOutcome = "created" | "updated" | "unchanged";

/** Upstream vulnerability metadata (a CVE or GHSA record). */
export interface VulnMetadataRow {
  /** The upstream id (`CVE-2024-1234`). */
  id: string;
  summary: string;
  details: string;
  /** `ADVISORY` … `WEB` (OSV reference types), in source order. */
  references: { type: string; url: string }[];
  severities: SeverityRow[];
  /** OSV `modified`, ms. */
  updateTime: number;
}

/** One page of metadata, ordered by id. */
export interface VulnMetadataWindow {
  /** Ids strictly after (or before, descending) this one. */
  afterId?: string;
  desc: boolean;
  limit: number;
  skip: number;
}

/** Advisories (global data, not an organization's) and upstream vulnerability metadata. */
export interface AdvisoryStore {
  get(uid: string): Promise<AdvisoryRow | undefined>;
  /** Ordered by uid (the window's order field must be `uid`, `create_time` or `update_time`). */
  list(filter: AdvisoryFilter, window: ListWindow): Promise<ListSlice<AdvisoryRow>>;
  /**
   * Inserts or replaces the advisory `row.uid` with its aliases and events. `unchanged` (nothing
   * written) when the stored row equals `row`.
   */
  upsert(row: AdvisoryRow): Promise<UpsertOutcome>;
  /**
   * Advisories grouped for the advisory feed: every non-withdrawn advisory of origin `origin`
   * (all when ""), having one of `aliases` (any when empty), ordered by origin then advisory id.
   */
  byOrigin(origin: string, aliases: readonly string[]): Promise<AdvisoryRow[]>;
  getMetadata(id: string): Promise<VulnMetadataRow | undefined>;
  /** Upsert of one metadata record, like `upsert`. */
  upsertMetadata(row: VulnMetadataRow): Promise<UpsertOutcome>;
  /** Metadata of `ids` (all when empty), ordered by id, with the total matching. */
  listMetadata(ids: readonly string[], window: VulnMetadataWindow): Promise<ListSlice<VulnMetadataRow>>;
}
