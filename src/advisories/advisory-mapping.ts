import { toTimestamp } from "../core/api-convert.js";
import {
  type Advisory,
  type AdvisoryEvent,
  type Detection,
  EventTypeFilter,
  FalsePositiveDetermination_Type,
  ReviewState,
  type Severity_Type,
} from "../gen/platform/vulnerabilities/v2/advisories_pb.js";
import type {
  AdvisoryEventRow,
  AdvisoryEventType,
  AdvisoryRow,
  ReviewState as ReviewStateName,
  SeverityRow,
} from "../storage/advisory-store.js";
import { FALSE_POSITIVE_TYPES } from "./formats/advisories-yaml.js";

const EVENT_FILTERS: ReadonlyMap<EventTypeFilter, AdvisoryEventType> = new Map([
  [EventTypeFilter.DETECTION, "detection"],
  [EventTypeFilter.TRUE_POSITIVE_DETERMINATION, "true-positive-determination"],
  [EventTypeFilter.FIXED, "fixed"],
  [EventTypeFilter.FALSE_POSITIVE_DETERMINATION, "false-positive-determination"],
  [EventTypeFilter.ANALYSIS_NOT_PLANNED, "analysis-not-planned"],
  [EventTypeFilter.FIX_NOT_PLANNED, "fix-not-planned"],
  [EventTypeFilter.PENDING_UPSTREAM_FIX, "pending-upstream-fix"],
  [EventTypeFilter.PATCHED, "patched"],
]);

const REVIEW_STATES: ReadonlyMap<ReviewState, ReviewStateName> = new Map([
  [ReviewState.PENDING, "pending"],
  [ReviewState.APPROVED, "approved"],
  [ReviewState.REQUEST_CHANGES, "request-changes"],
  [ReviewState.REJECTED, "rejected"],
]);

/** The stored event type of an API filter value; undefined for UNSPECIFIED or unknown numbers. */
export function eventTypeOf(filter: EventTypeFilter): AdvisoryEventType | undefined {
  return EVENT_FILTERS.get(filter);
}

/** The stored review state of an API value; undefined for UNSPECIFIED or unknown numbers. */
export function reviewStateOf(state: ReviewState): ReviewStateName | undefined {
  return REVIEW_STATES.get(state);
}

function reviewStateEnum(state: ReviewStateName): ReviewState {
  for (const [value, name] of REVIEW_STATES) if (name === state) return value;
  return ReviewState.UNSPECIFIED;
}

/** `CVSS_V3` → the API's severity type number (0 for anything else). */
export function severityTypeNumber(type: string): number {
  return type === "CVSS_V2" ? 1 : type === "CVSS_V3" ? 2 : type === "CVSS_V4" ? 3 : 0;
}

/** A stored false-positive type (`vulnerable-code-not-in-execution-path`) as the API enum number. */
export function falsePositiveTypeNumber(type: unknown): FalsePositiveDetermination_Type {
  const i = (FALSE_POSITIVE_TYPES as readonly unknown[]).indexOf(type);
  return i < 0 ? FalsePositiveDetermination_Type.UNSPECIFIED : ((i + 1) as FalsePositiveDetermination_Type);
}

const text = (v: unknown): string => (typeof v === "string" ? v : "");
const record = (v: unknown): Record<string, unknown> =>
  typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {};

const T = "platform.vulnerabilities.v2";

function detection(d: Record<string, unknown>): Detection {
  let data: Detection["data"];
  if ("nvdapi" in d) {
    const n = record(d.nvdapi);
    data = {
      case: "nvdapi",
      value: {
        $typeName: `${T}.Detection.NvdApi`,
        cpeSearched: text(n.cpeSearched),
        cpeFound: text(n.cpeFound),
      },
    };
  } else if ("scanv1" in d) {
    const s = record(d.scanv1);
    data = {
      case: "scanv1",
      value: {
        $typeName: `${T}.Detection.ScanV1`,
        scanner: text(s.scanner),
        subpackage: text(s.subpackage),
        componentId: text(s.componentId),
        component: text(s.component),
        componentVersion: text(s.componentVersion),
        componentType: text(s.componentType),
        componentLocation: text(s.componentLocation),
        artifactVersion: text(s.artifactVersion),
        scannerVersion: text(s.scannerVersion),
        grypeDbBuilt: text(s.grypeDbBuilt),
        grypeDbChecksum: text(s.grypeDbChecksum),
      },
    };
  } else {
    data = { case: "manual", value: { $typeName: `${T}.Detection.Manual` } };
  }
  return { $typeName: `${T}.Detection`, data };
}

/** The oneof `event` of an AdvisoryEvent, from a stored event. */
function eventOneof(e: AdvisoryEventRow): AdvisoryEvent["event"] {
  const d = e.data;
  const note = text(d.note);
  switch (e.type) {
    case "detection":
      return { case: "detection", value: detection(d) };
    case "fixed":
      return {
        case: "fixed",
        value: {
          $typeName: `${T}.Fixed`,
          fixedVersion: text(d.fixedVersion),
          note,
          scannerVersion: text(d.scannerVersion),
          grypeDbBuilt: text(d.grypeDbBuilt),
          grypeDbChecksum: text(d.grypeDbChecksum),
        },
      };
    case "false-positive-determination":
      return {
        case: "falsePositiveDetermination",
        value: { $typeName: `${T}.FalsePositiveDetermination`, type: falsePositiveTypeNumber(d.type), note },
      };
    case "true-positive-determination":
      return {
        case: "truePositiveDetermination",
        value: { $typeName: `${T}.TruePositiveDetermination`, note },
      };
    case "analysis-not-planned":
      return { case: "analysisNotPlanned", value: { $typeName: `${T}.AnalysisNotPlanned`, note } };
    case "fix-not-planned":
      return { case: "fixNotPlanned", value: { $typeName: `${T}.FixNotPlanned`, note } };
    case "pending-upstream-fix":
      return { case: "pendingUpstreamFix", value: { $typeName: `${T}.PendingUpstreamFix`, note } };
    case "patched":
      return {
        case: "patched",
        value: {
          $typeName: `${T}.Patched`,
          patchedVersions: Array.isArray(d.patchedVersions) ? d.patchedVersions.map(text) : [],
          note,
        },
      };
  }
}

/** A stored severity as the API's `{type, score (vector), baseScore}`. */
export function severityMessage(s: SeverityRow): { type: Severity_Type; score: string; baseScore: number } {
  return { type: severityTypeNumber(s.type) as Severity_Type, score: s.vector, baseScore: s.baseScore };
}

/**
 * The API message of a stored advisory, written as literals rather than through `create` (a
 * page of 50 advisories holds some 500 messages; `create` costs microseconds each, ADR 0025).
 */
export function advisoryMessage(row: AdvisoryRow): Advisory {
  const findings = row.findings === "" ? new Uint8Array() : Buffer.from(row.findings);
  return {
    $typeName: `${T}.Advisory`,
    uid: row.uid,
    advisoryId: row.advisoryId,
    legacyAdvisoryId: row.legacyAdvisoryId,
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.updateTime),
    deleteTime: toTimestamp(row.deleteTime),
    author: row.author,
    artifactName: row.artifactName,
    artifactType: row.artifactType,
    artifactArchitecture: row.artifactArchitecture,
    componentName: row.componentName,
    componentType: row.componentType,
    componentLocation: row.componentLocation,
    aliases: row.aliases,
    severities: row.severities.map((s) => ({ $typeName: `${T}.Severity`, ...severityMessage(s) })),
    events: row.events.map((e) => ({
      $typeName: `${T}.AdvisoryEvent`,
      uid: e.uid,
      createTime: toTimestamp(e.time),
      author: e.author,
      reviewer: e.reviewer,
      reviewState: reviewStateEnum(e.reviewState),
      issue: e.issue,
      findings,
      event: eventOneof(e),
    })),
  };
}
