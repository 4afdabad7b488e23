import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { fromTimestamp, toTimestamp } from "../core/api-convert.js";
import { invalidArgument } from "../core/errors.js";
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, PageTokenCodec } from "../core/list.js";
import type { ServiceHandlers } from "../core/service.js";
import { requireUidp } from "../core/uidp.js";
import { DAY_MS, startOfDay } from "../core/utc-day.js";
import {
  type DetectionSchema,
  type DocumentEvent,
  DocumentEventSchema,
  type ListDocumentsResponseSchema,
  type ListVulnerabilityMetadataRequest,
  Reference_Type,
  type ResolvedVulnSchema,
  type SecurityAdvisoryService,
} from "../gen/platform/advisory/v2/security_advisory_pb.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import { FalsePositiveDetermination_Type } from "../gen/platform/vulnerabilities/v2/advisories_pb.js";
import type { AdvisoryEventRow, AdvisoryRow } from "../storage/advisory-store.js";
import type { AdvisoriesServiceDeps } from "./advisories-service.js";
import { falsePositiveTypeNumber, severityMessage } from "./advisory-mapping.js";
import type { ResolvedVulnsSource } from "./resolved-vulns-source.js";

/** What SecurityAdvisoryService is built from. */
export interface SecurityAdvisoryServiceDeps extends AdvisoriesServiceDeps {
  /** The data of ResolvedVulns (vulnerability reports along tag history). */
  resolvedVulns: ResolvedVulnsSource;
}

/** Most unique ids one metadata request may name. */
export const MAX_METADATA_IDS = 1000;
/** Longest day range of ResolvedVulns. */
const MAX_RESOLVED_DAYS = 366;
const RESOLVED_VULNS_CAPS = [
  Capability.CAP_REPO_LIST,
  Capability.CAP_MANIFEST_METADATA_LIST,
  Capability.CAP_TAG_LIST,
] as const;

const text = (v: unknown): string => (typeof v === "string" ? v : "");
const record = (v: unknown): Record<string, unknown> =>
  typeof v === "object" && v !== null ? (v as Record<string, unknown>) : {};

/** A stored event in the feed's shape; `patched` (no feed spelling) is left out. */
function documentEvent(e: AdvisoryEventRow): DocumentEvent | undefined {
  const d = e.data;
  let data: MessageInitShape<typeof DocumentEventSchema>["data"];
  switch (e.type) {
    case "detection": {
      const scan = record(d.scanv1);
      const nvd = record(d.nvdapi);
      const inner: MessageInitShape<typeof DetectionSchema>["data"] =
        "scanv1" in d
          ? {
              case: "scanv1" as const,
              value: {
                subpackageName: text(scan.subpackage),
                componentId: text(scan.componentId),
                componentName: text(scan.component),
                componentVersion: text(scan.componentVersion),
                componentType: text(scan.componentType),
                componentLocation: text(scan.componentLocation),
                scanner: text(scan.scanner),
              },
            }
          : "nvdapi" in d
            ? {
                case: "nvdapi" as const,
                value: { cpeSearched: text(nvd.cpeSearched), cpeFound: text(nvd.cpeFound) },
              }
            : { case: "manual" as const, value: {} };
      data = { case: "detection", value: { data: inner } };
      break;
    }
    case "fixed":
      data = { case: "fixed", value: { fixedVersion: text(d.fixedVersion) } };
      break;
    case "false-positive-determination": {
      const type = FalsePositiveDetermination_Type[falsePositiveTypeNumber(d.type)];
      data = {
        case: "falsePositiveDetermination",
        value: { type: `TYPE_${type}`, note: text(d.note) },
      };
      break;
    }
    case "true-positive-determination":
      data = { case: "truePositiveDetermination", value: { note: text(d.note) } };
      break;
    case "analysis-not-planned":
      data = { case: "analysisNotPlanned", value: { note: text(d.note) } };
      break;
    case "fix-not-planned":
      data = { case: "fixNotPlanned", value: { note: text(d.note) } };
      break;
    case "pending-upstream-fix":
      data = { case: "pendingUpstreamFix", value: { note: text(d.note) } };
      break;
    default:
      return undefined;
  }
  return create(DocumentEventSchema, { timestamp: toTimestamp(e.time), data });
}

/** Advisories grouped by origin package, in the order the store gave them. */
function documentsOf(
  rows: readonly AdvisoryRow[],
): MessageInitShape<typeof ListDocumentsResponseSchema>["documents"] {
  const byOrigin = new Map<string, AdvisoryRow[]>();
  for (const row of rows) {
    const list = byOrigin.get(row.originPackage) ?? [];
    list.push(row);
    byOrigin.set(row.originPackage, list);
  }
  return [...byOrigin].map(([id, list]) => ({
    id,
    advisories: list.map((a) => ({
      id: a.advisoryId,
      aliases: a.aliases,
      packageNamespace: a.packageNamespace,
      events: a.events.map(documentEvent).filter((e): e is DocumentEvent => e !== undefined),
    })),
  }));
}

const REFERENCE_TYPES = new Set(Object.keys(Reference_Type).filter((k) => Number.isNaN(Number(k))));

/** OSV `FIX` → Reference_Type.FIX; unknown types are UNSPECIFIED. */
function referenceType(type: string): Reference_Type {
  return REFERENCE_TYPES.has(type)
    ? Reference_Type[type as keyof typeof Reference_Type]
    : Reference_Type.UNSPECIFIED;
}

/** `""`, `id`, `id asc` → ascending; `id desc` → descending; anything else INVALID_ARGUMENT. */
function metadataOrder(orderBy: string): boolean {
  const parts = orderBy.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (parts.length === 0) return false;
  if (
    parts[0] === "id" &&
    parts.length <= 2 &&
    (parts[1] === undefined || parts[1] === "asc" || parts[1] === "desc")
  ) {
    return parts[1] === "desc";
  }
  throw invalidArgument("order_by", `"${orderBy}" must be "id [asc|desc]"`);
}

function metadataIds(req: ListVulnerabilityMetadataRequest): string[] {
  const ids = [...new Set([req.id, ...req.ids].map((id) => id.trim()).filter((id) => id !== ""))];
  if (ids.length > MAX_METADATA_IDS) {
    throw invalidArgument("ids", `at most ${MAX_METADATA_IDS} unique ids per request (got ${ids.length})`);
  }
  return ids;
}

/**
 * SecurityAdvisoryService (`platform.advisory.v2`): the public advisory feed. ListDocuments and
 * ListVulnerabilityMetadata need no authentication; ResolvedVulns needs repo.list,
 * manifest.metadata.list and tag.list at every repo it names, and reads `deps.resolvedVulns`.
 */
export function createSecurityAdvisoryService(
  deps: SecurityAdvisoryServiceDeps,
): ServiceHandlers<typeof SecurityAdvisoryService> {
  const { store } = deps;
  const source = deps.resolvedVulns;
  return {
    async listDocuments(req) {
      const cves = [...new Set(req.cves.filter((c) => c !== ""))];
      if (cves.length > MAX_METADATA_IDS) {
        throw invalidArgument(
          "cves",
          `at most ${MAX_METADATA_IDS} unique ids per request (got ${cves.length})`,
        );
      }
      return { documents: documentsOf(await store.advisories.byOrigin(req.id.trim(), cves)) };
    },

    async listVulnerabilityMetadata(req) {
      const ids = metadataIds(req);
      if (req.pageSize < 0) throw invalidArgument("page_size", "must not be negative");
      if (req.skip < 0) throw invalidArgument("skip", "must not be negative");
      const desc = metadataOrder(req.orderBy);
      const limit = req.pageSize === 0 ? DEFAULT_PAGE_SIZE : Math.min(req.pageSize, MAX_PAGE_SIZE);
      const queryHash = PageTokenCodec.queryHash({ ids, desc });
      const resumed = req.pageToken ? deps.pageTokens.decode(req.pageToken, queryHash) : undefined;
      const slice = await store.advisories.listMetadata(ids, {
        desc,
        limit,
        skip: req.skip,
        ...(resumed ? { afterId: resumed.cursor.uid } : {}),
      });
      const rows = slice.rows.slice(0, limit);
      const skipped = (resumed?.skipped ?? 0) + Math.min(req.skip, Number(slice.total));
      const last = rows.at(-1);
      return {
        vulnerabilityMetadata: rows.map((m) => ({
          id: m.id,
          summary: m.summary,
          details: m.details,
          references: m.references.map((r) => ({ type: referenceType(r.type), url: r.url })),
          severities: m.severities.map(severityMessage),
        })),
        nextPageToken:
          slice.rows.length > limit && last
            ? deps.pageTokens.encode(queryHash, { value: last.id, uid: last.id }, skipped)
            : "",
        totalCount: slice.total,
        skipped,
      };
    },

    async resolvedVulns(req, ctx) {
      if (req.imageRefs.length === 0) throw invalidArgument("image_refs", "at least one image is required");
      const end = fromTimestamp(req.endTime) ?? ctx.clock.now();
      const lastDay = startOfDay(end);
      const firstDay = startOfDay(fromTimestamp(req.startTime) ?? lastDay - 30 * DAY_MS);
      if (firstDay > lastDay) throw invalidArgument("start_time", "must not be after end_time");
      if ((lastDay - firstDay) / DAY_MS + 1 > MAX_RESOLVED_DAYS) {
        throw invalidArgument("start_time", `at most ${MAX_RESOLVED_DAYS} days per request`);
      }
      const refs = req.imageRefs.map((ref, i) => ({
        repoUid: requireUidp(`image_refs[${i}].repo`, ref.repo),
        tags: ref.tags.length > 0 ? [...new Set(ref.tags)] : ["latest"],
      }));
      for (const ref of refs) await ctx.access.require(ref.repoUid, RESOLVED_VULNS_CAPS);
      const perDay = new Map<number, Map<string, MessageInitShape<typeof ResolvedVulnSchema>>>();
      for (let day = firstDay; day <= lastDay; day += DAY_MS) perDay.set(day, new Map());
      for (const ref of refs) {
        const days = await source.resolvedVulns({ ...ref, firstDay, lastDay }, ctx.signal);
        for (const { day, vulnerabilities } of days) {
          const bucket = perDay.get(startOfDay(day));
          if (bucket === undefined) continue; // outside the asked range
          for (const v of vulnerabilities) {
            if (bucket.has(v.id)) continue;
            bucket.set(v.id, {
              id: v.id,
              aliases: v.aliases,
              cvssSeverities: v.severities.map(severityMessage),
            });
          }
        }
      }
      return {
        resolvedVulnsReports: [...perDay].map(([day, vulns]) => ({
          date: toTimestamp(day),
          resolvedVulns: [...vulns.values()],
        })),
      };
    },
  };
}
