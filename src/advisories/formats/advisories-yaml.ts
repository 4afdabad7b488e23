import { parse as parseYaml } from "yaml";
import type { AdvisoryEventRow, AdvisoryEventType, AdvisoryRow } from "../../storage/advisory-store.js";
import { advisoryEventUid, advisoryIdsOf, advisoryUid } from "../advisory-identity.js";
import type { ImportIssue, Parsed } from "./import-issue.js";
import { rejected } from "./import-issue.js";

/** The false-positive determination types of wolfictl's v2 schema. */
export const FALSE_POSITIVE_TYPES = [
  "vulnerability-record-analysis-contested",
  "component-vulnerability-mismatch",
  "vulnerable-code-version-not-used",
  "vulnerable-code-not-included-in-package",
  "vulnerable-code-not-in-execution-path",
  "vulnerable-code-cannot-be-controlled-by-adversary",
  "inline-mitigations-exist",
] as const;

const NOTE_EVENTS = new Set<string>([
  "true-positive-determination",
  "analysis-not-planned",
  "fix-not-planned",
  "pending-upstream-fix",
]);

/** Options of the YAML mapping. */
export interface AdvisoriesYamlOptions {
  /** Author of the imported events. */
  author: string;
  /** Package namespace of the file's package (default `wolfi`). */
  namespace?: string;
}

/** A parsed `*.advisories.yaml`: the advisories taken and the ones rejected. */
export interface AdvisoriesYaml {
  advisories: AdvisoryRow[];
  rejected: ImportIssue[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** A timestamp as ms: the YAML loader may hand a Date or the RFC 3339 text. */
function timeOf(value: unknown): number | undefined {
  const ms =
    value instanceof Date ? value.getTime() : typeof value === "string" ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) ? ms : undefined;
}

function detectionData(data: Obj, at: string): Parsed<Obj> {
  const kind = str(data.type);
  const inner = isObj(data.data) ? data.data : {};
  if (kind === "manual") return { ok: true, value: { manual: {} } };
  if (kind === "nvdapi") {
    return {
      ok: true,
      value: { nvdapi: { cpeSearched: str(inner.cpeSearched), cpeFound: str(inner.cpeFound) } },
    };
  }
  if (kind === "scan/v1") {
    return {
      ok: true,
      value: {
        scanv1: {
          scanner: str(inner.scanner),
          subpackage: str(inner.subpackageName),
          componentId: str(inner.componentID),
          component: str(inner.componentName),
          componentVersion: str(inner.componentVersion),
          componentType: str(inner.componentType),
          componentLocation: str(inner.componentLocation),
        },
      },
    };
  }
  return rejected(
    `${at}.data.type`,
    "type",
    `detection type must be nvdapi, manual or scan/v1 (got "${kind}")`,
  );
}

/** The API-shaped payload of one YAML event, or why it is invalid. */
function eventData(type: string, data: Obj, at: string): Parsed<Obj> {
  if (type === "detection") return detectionData(data, at);
  if (type === "fixed") {
    const version = str(data["fixed-version"]);
    if (version === "")
      return rejected(`${at}.data.fixed-version`, "fixed-version", "a fixed event needs fixed-version");
    return { ok: true, value: { fixedVersion: version } };
  }
  if (type === "false-positive-determination") {
    const fpType = str(data.type);
    if (!(FALSE_POSITIVE_TYPES as readonly string[]).includes(fpType)) {
      return rejected(
        `${at}.data.type`,
        "type",
        `false-positive type must be one of ${FALSE_POSITIVE_TYPES.join(", ")} (got "${fpType}")`,
      );
    }
    return { ok: true, value: { type: fpType, note: str(data.note) } };
  }
  if (NOTE_EVENTS.has(type)) return { ok: true, value: { note: str(data.note) } };
  return rejected(`${at}.type`, "type", `unknown event type "${type}"`);
}

function advisoryOf(
  raw: unknown,
  at: string,
  pkg: string,
  options: AdvisoriesYamlOptions,
): Parsed<AdvisoryRow> {
  if (!isObj(raw)) return rejected(at, "", "an advisory must be a mapping");
  const sourceId = str(raw.id);
  if (sourceId === "") return rejected(`${at}.id`, "id", "an advisory needs an id");
  if (
    raw.aliases !== undefined &&
    !(Array.isArray(raw.aliases) && raw.aliases.every((a) => typeof a === "string"))
  ) {
    return rejected(`${at}.aliases`, "aliases", "aliases must be a list of strings");
  }
  if (!Array.isArray(raw.events) || raw.events.length === 0) {
    return rejected(`${at}.events`, "events", "an advisory needs at least one event");
  }
  const namespace = options.namespace ?? "wolfi";
  const ids = advisoryIdsOf(namespace, pkg, sourceId);
  const uid = advisoryUid(ids.advisoryId, pkg);
  const events: AdvisoryEventRow[] = [];
  for (const [j, ev] of raw.events.entries()) {
    const evAt = `${at}.events[${j}]`;
    if (!isObj(ev)) return rejected(evAt, "", "an event must be a mapping");
    const time = timeOf(ev.timestamp);
    if (time === undefined)
      return rejected(`${evAt}.timestamp`, "timestamp", "an event needs an RFC 3339 timestamp");
    const type = str(ev.type);
    const data = eventData(type, isObj(ev.data) ? ev.data : {}, evAt);
    if (!data.ok) return data;
    events.push({
      uid: advisoryEventUid(uid, time, type, j),
      time,
      type: type as AdvisoryEventType,
      author: options.author,
      reviewer: "",
      reviewState: "approved",
      issue: "",
      data: data.value,
    });
  }
  // The component a scanner found, from the latest scan detection.
  const scan = events.findLast((e) => e.type === "detection" && isObj(e.data.scanv1))?.data.scanv1 as
    | Obj
    | undefined;
  const aliases = [
    ...new Set([
      ...((raw.aliases as string[] | undefined) ?? []),
      ...(ids.legacyAdvisoryId ? [sourceId] : []),
    ]),
  ];
  return {
    ok: true,
    value: {
      uid,
      ...ids,
      author: options.author,
      artifactName: pkg,
      artifactType: "apk",
      artifactArchitecture: "",
      componentName: str(scan?.component),
      componentType: str(scan?.componentType),
      componentLocation: str(scan?.componentLocation),
      originPackage: pkg,
      packageNamespace: namespace,
      aliases,
      events,
      severities: [],
      findings: "",
      createTime: Math.min(...events.map((e) => e.time)),
      updateTime: Math.max(...events.map((e) => e.time)),
    },
  };
}

/**
 * Parses a Chainguard/Wolfi `*.advisories.yaml` (schema-version 2.x): one advisory per entry of
 * `advisories`, for `package.name`. A malformed entry is rejected alone (located like
 * `advisories[3].events[1].data.fixed-version`); a file that is not such a document at all is one
 * file-level issue.
 */
export function parseAdvisoriesYaml(text: string, options: AdvisoriesYamlOptions): Parsed<AdvisoriesYaml> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    return rejected("", "", `not valid YAML: ${(err as Error).message.split("\n")[0]}`);
  }
  if (!isObj(doc)) return rejected("", "", "not an advisories document (expected a mapping)");
  const version = String(doc["schema-version"] ?? "");
  if (!/^2(\.|$)/.test(version)) {
    return rejected("schema-version", "schema-version", `schema-version must be 2.x (got "${version}")`);
  }
  const pkg = isObj(doc.package) ? str(doc.package.name) : "";
  if (pkg === "") return rejected("package.name", "name", "package.name is required");
  if (!Array.isArray(doc.advisories))
    return rejected("advisories", "advisories", "advisories must be a list");
  const out: AdvisoriesYaml = { advisories: [], rejected: [] };
  for (const [i, raw] of doc.advisories.entries()) {
    const parsed = advisoryOf(raw, `advisories[${i}]`, pkg, options);
    if (parsed.ok) out.advisories.push(parsed.value);
    else out.rejected.push(parsed.issue);
  }
  return { ok: true, value: out };
}
