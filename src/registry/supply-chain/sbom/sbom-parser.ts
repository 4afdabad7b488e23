import {
  type JsonHit,
  type JsonSource,
  type JsonStreamProblem,
  streamJson,
} from "../../../codec/json-stream.js";
import type { SbomPackage } from "../supply-chain.js";
import { SbomFormatError } from "./sbom-errors.js";

/** The bounds of one parse. */
export interface SbomLimits {
  /** Bytes of the document (a DSSE envelope's decoded payload counts again). */
  maxBytes: number;
  /** Packages (SPDX `packages[]`, CycloneDX components at any depth). */
  maxPackages: number;
}

/** What an SBOM document holds, as Wharf reads it. */
export interface ParsedSbom {
  /** `SPDX-2.3`, `CycloneDX-1.5` or `CycloneDX-1.6`. */
  format: string;
  /** How it was wrapped. */
  envelope: "bare" | "in-toto-statement" | "dsse-envelope";
  packages: SbomPackage[];
}

/** The payload type of a DSSE envelope around an in-toto statement. */
const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";
const CYCLONEDX_VERSIONS = ["1.5", "1.6"];
const EXPECTED =
  "expected an SPDX 2.3 or CycloneDX 1.5/1.6 JSON SBOM, bare, as an in-toto statement's predicate, or in a DSSE envelope";

/** How deep CycloneDX components may nest (`components[].components[]…`); deeper ones are an error. */
export const MAX_COMPONENT_DEPTH = 32;

const SPDX_FIELDS = ["name", "versionInfo", "externalRefs", "licenseConcluded", "licenseDeclared"];
const CDX_FIELDS = ["name", "version", "purl", "licenses"];
const ROOTS = ["$", "$.predicate"];

function buildPaths(): string[] {
  const paths = [
    "$.payloadType",
    "$.payload",
    "$.dsseEnvelope.payloadType",
    "$.dsseEnvelope.payload",
    "$._type",
    "$.predicateType",
  ];
  for (const root of ROOTS) {
    paths.push(`${root}.spdxVersion`, `${root}.bomFormat`, `${root}.specVersion`);
    for (const f of SPDX_FIELDS) paths.push(`${root}.packages.*.${f}`);
    let nested = root;
    for (let depth = 1; depth <= MAX_COMPONENT_DEPTH + 1; depth++) {
      nested += ".components.*";
      // One level past the limit only to notice it.
      if (depth > MAX_COMPONENT_DEPTH) paths.push(`${nested}.name`);
      else for (const f of CDX_FIELDS) paths.push(`${nested}.${f}`);
    }
  }
  return paths;
}
const PATHS = buildPaths();

/** A package while its fields stream in. */
interface Partial {
  /** Where it sits, for messages (built only when one is needed). */
  readonly where: string;
  indices: number[];
  name?: unknown;
  version?: unknown;
  purl?: unknown;
  licenseConcluded?: unknown;
  licenseDeclared?: unknown;
  licenses?: unknown;
  externalRefs?: unknown;
}

/** What one streamed pass collected. */
interface Collected {
  root?: string;
  markers: Record<string, unknown>;
  spdx: Map<number, Partial>;
  cdx: Map<string, Partial>;
}

function typeName(value: unknown): string {
  return value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
}

function optionalString(value: unknown, where: string): string {
  if (value === undefined || value === null) return "";
  if (typeof value !== "string")
    throw new SbomFormatError(`${where} must be a string, not ${typeName(value)}`);
  return value;
}

/** `packages[3]`, `components[0].components[2]`, under `predicate.` inside a statement. */
function location(root: string, keys: (string | number)[]): string {
  let where = root === "$" ? "" : "predicate";
  for (const k of keys) where += typeof k === "number" ? `[${k}]` : where === "" ? k : `.${k}`;
  return where;
}

function partialFor(
  collected: Collected,
  root: string,
  rel: (string | number)[],
  limits: SbomLimits,
): Partial {
  const isSpdx = rel[0] === "packages";
  const map: Map<number | string, Partial> = isSpdx ? collected.spdx : collected.cdx;
  const id = isSpdx ? (rel[1] as number) : rel.slice(0, -1).join(".");
  let partial = map.get(id);
  if (partial === undefined) {
    if (collected.spdx.size + collected.cdx.size >= limits.maxPackages)
      throw new SbomFormatError(`the SBOM lists more than the limit of ${limits.maxPackages} packages`);
    const path = rel.slice(0, -1);
    partial = {
      get where() {
        return location(root, path);
      },
      indices: isSpdx ? [id as number] : path.filter((k): k is number => typeof k === "number"),
    };
    map.set(id, partial);
  }
  return partial;
}

function collect(hit: JsonHit, collected: Collected, limits: SbomLimits): void {
  const { keys, value } = hit;
  const inPredicate = keys[0] === "predicate" && keys.length > 1;
  const root = inPredicate ? "$.predicate" : "$";
  const rel = inPredicate ? keys.slice(1) : keys;
  const first = rel[0];
  if (!inPredicate && (first === "payloadType" || first === "payload" || first === "dsseEnvelope")) {
    collected.markers[String(rel[rel.length - 1])] = value;
    return;
  }
  if (!inPredicate && (first === "_type" || first === "predicateType")) {
    collected.markers[first] = value;
    return;
  }
  if (collected.root !== undefined && collected.root !== root)
    throw new SbomFormatError("the document holds SBOM fields both at its root and in an in-toto predicate");
  collected.root = root;
  if (rel.length === 1) {
    collected.markers[String(first)] = value;
    return;
  }
  const field = String(rel[rel.length - 1]);
  if (first === "components" && rel.length > 2 * MAX_COMPONENT_DEPTH + 1) {
    throw new SbomFormatError(
      `${location(root, rel.slice(0, -1))}: components nest deeper than ${MAX_COMPONENT_DEPTH} levels`,
    );
  }
  const partial = partialFor(collected, root, rel, limits);
  switch (field) {
    case "versionInfo":
    case "version":
      partial.version = value;
      return;
    default:
      (partial as unknown as Record<string, unknown>)[field] = value;
  }
}

/** SPDX: the purl external reference's locator, or "". */
function spdxPurl(refs: unknown, where: string): string {
  if (refs === undefined || refs === null) return "";
  if (!Array.isArray(refs))
    throw new SbomFormatError(`${where}.externalRefs must be an array, not ${typeName(refs)}`);
  for (const [i, ref] of refs.entries()) {
    if (typeof ref !== "object" || ref === null) continue;
    const r = ref as Record<string, unknown>;
    if (r.referenceType === "purl")
      return optionalString(r.referenceLocator, `${where}.externalRefs[${i}].referenceLocator`);
  }
  return "";
}

/** SPDX: the concluded license, else the declared one; NOASSERTION means none. */
function spdxLicense(p: Partial): string {
  for (const [field, value] of [
    ["licenseConcluded", p.licenseConcluded],
    ["licenseDeclared", p.licenseDeclared],
  ] as const) {
    const license = optionalString(value, `${p.where}.${field}`);
    if (license !== "" && license !== "NOASSERTION") return license;
  }
  return "";
}

/** CycloneDX: each `licenses[]` entry's `license.id`, `license.name` or `expression`, joined with AND. */
function cdxLicense(licenses: unknown, where: string): string {
  if (licenses === undefined || licenses === null) return "";
  if (!Array.isArray(licenses))
    throw new SbomFormatError(`${where}.licenses must be an array, not ${typeName(licenses)}`);
  const names: string[] = [];
  for (const [i, entry] of licenses.entries()) {
    const at = `${where}.licenses[${i}]`;
    if (typeof entry !== "object" || entry === null) throw new SbomFormatError(`${at} must be an object`);
    const e = entry as Record<string, unknown>;
    if (e.expression !== undefined) {
      names.push(optionalString(e.expression, `${at}.expression`));
      continue;
    }
    const license = e.license;
    if (typeof license !== "object" || license === null)
      throw new SbomFormatError(`${at} has neither license nor expression`);
    const l = license as Record<string, unknown>;
    names.push(optionalString(l.id, `${at}.license.id`) || optionalString(l.name, `${at}.license.name`));
  }
  const present = names.filter((n) => n !== "");
  return present.length > 1
    ? present.map((n) => (/\s/.test(n) ? `(${n})` : n)).join(" AND ")
    : (present[0] ?? "");
}

function packageName(p: Partial): string {
  if (p.name === undefined) throw new SbomFormatError(`${p.where} has no name`);
  if (typeof p.name !== "string")
    throw new SbomFormatError(`${p.where}.name must be a string, not ${typeName(p.name)}`);
  return p.name;
}

/** An SBOM document's refusals, as GetSbom words them. */
function sbomJsonRefusal(problem: JsonStreamProblem, detail: string, maxBytes: number): SbomFormatError {
  switch (problem) {
    case "malformed":
      return new SbomFormatError(`the SBOM is not valid JSON (malformed or cut short): ${detail}`);
    case "too-large":
      return new SbomFormatError(`the SBOM is larger than the limit of ${maxBytes} bytes`);
    case "trailing":
      return new SbomFormatError("the SBOM is not valid JSON: data after the end of the document");
    case "empty":
      return new SbomFormatError("the SBOM is empty");
    default:
      return new SbomFormatError("the SBOM is not valid JSON: it is cut short");
  }
}

/** Pre-order: a parent before its children, siblings in document order. */
function byIndices(a: Partial, b: Partial): number {
  const n = Math.min(a.indices.length, b.indices.length);
  for (let i = 0; i < n; i++) {
    const d = (a.indices[i] ?? 0) - (b.indices[i] ?? 0);
    if (d !== 0) return d;
  }
  return a.indices.length - b.indices.length;
}

function spdxDocument(collected: Collected): Omit<ParsedSbom, "envelope"> {
  const version = collected.markers.spdxVersion;
  if (version !== "SPDX-2.3") {
    throw new SbomFormatError(
      version === undefined
        ? "the SPDX document has no spdxVersion; expected SPDX-2.3"
        : `SPDX version ${JSON.stringify(version)} is not supported; expected SPDX-2.3`,
    );
  }
  const packages = [...collected.spdx.values()].map((p) => ({
    name: packageName(p),
    version: optionalString(p.version, `${p.where}.versionInfo`),
    purl: spdxPurl(p.externalRefs, p.where),
    license: spdxLicense(p),
  }));
  return { format: "SPDX-2.3", packages };
}

function cycloneDxDocument(collected: Collected): Omit<ParsedSbom, "envelope"> {
  const { bomFormat, specVersion } = collected.markers;
  if (bomFormat !== "CycloneDX")
    throw new SbomFormatError(`bomFormat is ${JSON.stringify(bomFormat)}; expected "CycloneDX"`);
  if (typeof specVersion !== "string" || !CYCLONEDX_VERSIONS.includes(specVersion)) {
    throw new SbomFormatError(
      `CycloneDX specVersion ${JSON.stringify(specVersion)} is not supported; expected 1.5 or 1.6`,
    );
  }
  const packages = [...collected.cdx.values()].sort(byIndices).map((p) => ({
    name: packageName(p),
    version: optionalString(p.version, `${p.where}.version`),
    purl: optionalString(p.purl, `${p.where}.purl`),
    license: cdxLicense(p.licenses, p.where),
  }));
  return { format: `CycloneDX-${specVersion}`, packages };
}

function decodePayload(collected: Collected): Uint8Array {
  const { payloadType, payload } = collected.markers;
  if (payloadType !== IN_TOTO_PAYLOAD_TYPE) {
    throw new SbomFormatError(
      `the DSSE envelope's payloadType is ${JSON.stringify(payloadType)}; expected ${IN_TOTO_PAYLOAD_TYPE}`,
    );
  }
  if (typeof payload !== "string" || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(payload))
    throw new SbomFormatError("the DSSE envelope's payload must be a base64 string");
  return Buffer.from(payload, /[-_]/.test(payload) ? "base64url" : "base64");
}

async function parseLevel(source: JsonSource, limits: SbomLimits, insideDsse: boolean): Promise<ParsedSbom> {
  const collected: Collected = { markers: {}, spdx: new Map(), cdx: new Map() };
  const refuse = (problem: JsonStreamProblem, detail: string) =>
    sbomJsonRefusal(problem, detail, limits.maxBytes);
  await streamJson(source, PATHS, { maxBytes: limits.maxBytes, refuse }, (hit) =>
    collect(hit, collected, limits),
  );
  const m = collected.markers;
  if (m.payloadType !== undefined || m.payload !== undefined) {
    if (insideDsse) throw new SbomFormatError("a DSSE envelope inside a DSSE envelope is not an SBOM");
    const inner = await parseLevel(decodePayload(collected), limits, true);
    return { ...inner, envelope: "dsse-envelope" };
  }
  const statement = collected.root === "$.predicate";
  if (insideDsse && !statement)
    throw new SbomFormatError(`the DSSE envelope's statement holds no SBOM predicate; ${EXPECTED}`);
  const hasSpdx = m.spdxVersion !== undefined || collected.spdx.size > 0;
  const hasCdx = m.bomFormat !== undefined || collected.cdx.size > 0;
  if (hasSpdx && hasCdx) throw new SbomFormatError("the document mixes SPDX and CycloneDX fields");
  if (!hasSpdx && !hasCdx) throw new SbomFormatError(`the document is not an SBOM Wharf reads; ${EXPECTED}`);
  const doc = hasSpdx ? spdxDocument(collected) : cycloneDxDocument(collected);
  return { ...doc, envelope: statement ? "in-toto-statement" : "bare" };
}

/**
 * Parses an SBOM, detecting its format: SPDX 2.3 JSON (`packages[]`) or CycloneDX 1.5/1.6 JSON
 * (`components[]`, nested at any depth up to {@link MAX_COMPONENT_DEPTH}, listed parent first), bare,
 * as the `predicate` of an in-toto statement, or in a DSSE envelope of such a statement (alone or as
 * a Sigstore bundle's `dsseEnvelope`). The document is streamed: only each package's name, version,
 * purl and license fields are built (a DSSE payload, being one base64 string, is held whole), and
 * `limits` bound its bytes and packages. Rejects with {@link SbomFormatError} saying what and where.
 */
export function parseSbom(source: JsonSource, limits: SbomLimits): Promise<ParsedSbom> {
  return parseLevel(source, limits, false);
}
