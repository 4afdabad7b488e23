import type {
  AdvisoryEventRow,
  AdvisoryRow,
  SeverityRow,
  VulnMetadataRow,
} from "../../storage/advisory-store.js";
import { advisoryEventUid, advisoryIdsOf, advisoryUid } from "../advisory-identity.js";
import { scoreCvss } from "../cvss.js";
import { ecosystemBase, ecosystemKind, isChainguardEcosystem } from "./ecosystems.js";
import { jsonPath, type Parsed, rejected } from "./import-issue.js";
import { osvSchemaIssue } from "./osv-validation.js";

interface OsvSeverity {
  type: string;
  score: string;
}
interface OsvRangeEvent {
  introduced?: string;
  fixed?: string;
  last_affected?: string;
  limit?: string;
}
interface OsvAffected {
  package?: { ecosystem: string; name: string; purl?: string };
  severity?: OsvSeverity[] | null;
  ranges?: { type: string; events: OsvRangeEvent[]; database_specific?: Record<string, unknown> }[];
  versions?: string[];
  ecosystem_specific?: Record<string, unknown>;
  database_specific?: Record<string, unknown>;
}
/** An OSV record that passed the schema. */
interface OsvRecord {
  id: string;
  modified: string;
  published?: string;
  withdrawn?: string;
  aliases?: string[] | null;
  upstream?: string[] | null;
  related?: unknown[];
  summary?: string;
  details?: string;
  severity?: OsvSeverity[] | null;
  affected?: OsvAffected[] | null;
  references?: { type: string; url: string }[] | null;
  database_specific?: Record<string, unknown>;
}

/** What one OSV record imports as. */
export interface OsvImport {
  /** One per affected package. */
  advisories: AdvisoryRow[];
  /** Set when the record is an upstream vulnerability (CVE-…, GHSA-…). */
  metadata?: VulnMetadataRow;
}

/** Options of the OSV mapping. */
export interface OsvMappingOptions {
  /** Author (and importer identity) of the events the import creates. */
  author: string;
}

const UPSTREAM_ID = /^(CVE|GHSA)-/;

/** True when an OSV id names an upstream vulnerability whose record is metadata (CVE-…, GHSA-…). */
export function isUpstreamId(id: string): boolean {
  return UPSTREAM_ID.test(id);
}

function unique(values: Iterable<string>): string[] {
  return [...new Set([...values].filter((v) => v !== ""))];
}

function scoreAll(list: OsvSeverity[] | null | undefined, base: string): Parsed<SeverityRow[]> {
  const out: SeverityRow[] = [];
  for (const [i, s] of (list ?? []).entries()) {
    if (s.type === "Ubuntu") continue; // a distribution's own words, not a vector
    const scored = scoreCvss(s.type, s.score);
    if ("error" in scored)
      return rejected(jsonPath(jsonPath(jsonPath(base, "severity"), i), "score"), "score", scored.error);
    out.push(scored);
  }
  return { ok: true, value: out };
}

/** The events an OSV affected entry stands for (security-data §1 and §2.4). */
function eventsOf(
  record: OsvRecord,
  affected: OsvAffected,
): Omit<AdvisoryEventRow, "uid" | "time" | "author">[] {
  const approved = { reviewer: "", reviewState: "approved" as const, issue: "" };
  const falsePositive =
    affected.database_specific?.false_positive === true || record.database_specific?.false_positive === true;
  if (falsePositive) {
    return [
      { ...approved, type: "false-positive-determination", data: { type: "", note: record.details ?? "" } },
    ];
  }
  const rangeEvents = (affected.ranges ?? []).flatMap((r) => r.events);
  const fixed = unique(rangeEvents.map((e) => e.fixed ?? "")).filter((v) => v !== "0");
  if (fixed.length > 0) return fixed.map((v) => ({ ...approved, type: "fixed", data: { fixedVersion: v } }));
  const lastAffected = unique(rangeEvents.map((e) => e.last_affected ?? ""));
  const note = lastAffected.length > 0 ? `affected up to and including ${lastAffected.join(", ")}` : "";
  return [{ ...approved, type: "true-positive-determination", data: { note } }];
}

function relatedIds(record: OsvRecord): string[] {
  return (record.related ?? []).map((r) => (typeof r === "string" ? r : (r as { id: string }).id));
}

/** The upstream metadata of a record: summary, details, references, scored severities. */
function metadataOf(record: OsvRecord, base: string): Parsed<VulnMetadataRow> {
  const severities = scoreAll(record.severity, base);
  if (!severities.ok) return severities;
  return {
    ok: true,
    value: {
      id: record.id,
      summary: record.summary ?? "",
      details: record.details ?? "",
      // The API's reference types have no GIT: a repository link is a web page.
      references: (record.references ?? []).map((r) => ({
        type: r.type === "GIT" ? "WEB" : r.type,
        url: r.url,
      })),
      severities: severities.value,
      updateTime: Date.parse(record.modified),
    },
  };
}

/**
 * Maps one OSV record (validated against the OSV schema first) onto advisories, one per affected
 * package, and, for an upstream id, its vulnerability metadata. `base` is the record's JSON path in
 * its file (`$`, `$[3]`), used to locate an issue. With `metadataOnly`, affected packages are
 * ignored and any id is taken as metadata.
 */
export function mapOsvRecord(
  record: unknown,
  base: string,
  options: OsvMappingOptions & { metadataOnly?: boolean },
): Parsed<OsvImport> {
  const schemaIssue = osvSchemaIssue(record, base);
  if (schemaIssue) return { ok: false, issue: schemaIssue };
  const osv = record as OsvRecord;
  if (options.metadataOnly) {
    const metadata = metadataOf(osv, base);
    return metadata.ok ? { ok: true, value: { advisories: [], metadata: metadata.value } } : metadata;
  }
  const upstream = isUpstreamId(osv.id);
  const affected = osv.affected ?? [];
  if (affected.length === 0 && !upstream) {
    return rejected(
      jsonPath(base, "affected"),
      "affected",
      "a record that is not a CVE or GHSA needs affected packages",
    );
  }
  const recordSeverities = scoreAll(osv.severity, base);
  if (!recordSeverities.ok) return recordSeverities;
  const modified = Date.parse(osv.modified);
  const published = osv.published ? Date.parse(osv.published) : modified;
  const firstOfEcosystem = new Map<string, string>();
  const advisories: AdvisoryRow[] = [];
  for (const [i, entry] of affected.entries()) {
    const at = jsonPath(jsonPath(base, "affected"), i);
    const pkg = entry.package;
    if (pkg === undefined)
      return rejected(jsonPath(at, "package"), "package", "an affected entry needs a package");
    const kind = ecosystemKind(pkg.ecosystem);
    if (kind === undefined) {
      return rejected(
        jsonPath(jsonPath(at, "package"), "ecosystem"),
        "ecosystem",
        `unknown OSV ecosystem "${pkg.ecosystem}"`,
      );
    }
    const severities = scoreAll(entry.severity, at);
    if (!severities.ok) return severities;
    const chainguard = isChainguardEcosystem(pkg.ecosystem);
    // Chainguard's exporter lists the origin package first, then its subpackages (security-data §2.4).
    if (!firstOfEcosystem.has(pkg.ecosystem)) firstOfEcosystem.set(pkg.ecosystem, pkg.name);
    const namespace = ecosystemBase(pkg.ecosystem).toLowerCase();
    const ids = advisoryIdsOf(namespace, pkg.name, osv.id);
    const uid = advisoryUid(ids.advisoryId, pkg.name);
    const aliases = unique([
      ...(osv.aliases ?? []),
      ...(osv.upstream ?? []),
      ...(chainguard ? relatedIds(osv) : []),
      ...(ids.legacyAdvisoryId ? [ids.legacyAdvisoryId] : []),
    ]).filter((a) => a !== ids.advisoryId);
    const events = eventsOf(osv, entry).map((e, index) => ({
      ...e,
      uid: advisoryEventUid(uid, modified, e.type, index),
      time: modified,
      author: options.author,
    }));
    const { package: _pkg, severity: _sev, ...findings } = entry;
    advisories.push({
      uid,
      ...ids,
      author: options.author,
      artifactName: pkg.name,
      artifactType: kind.artifactType,
      artifactArchitecture: "",
      componentName: kind.artifactType === "library" ? pkg.name : "",
      componentType: kind.artifactType === "library" ? kind.componentType : "",
      componentLocation: "",
      originPackage: chainguard ? (firstOfEcosystem.get(pkg.ecosystem) ?? pkg.name) : pkg.name,
      packageNamespace: namespace,
      aliases,
      events,
      severities: [...recordSeverities.value, ...severities.value],
      findings: Object.keys(findings).length > 0 ? JSON.stringify(findings) : "",
      createTime: published,
      updateTime: modified,
      ...(osv.withdrawn ? { deleteTime: Date.parse(osv.withdrawn) } : {}),
    });
  }
  let metadata: VulnMetadataRow | undefined;
  if (upstream) {
    const parsed = metadataOf(osv, base);
    if (!parsed.ok) return parsed;
    metadata = parsed.value;
  }
  return { ok: true, value: { advisories, ...(metadata ? { metadata } : {}) } };
}
