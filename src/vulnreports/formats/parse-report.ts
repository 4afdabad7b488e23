import type { NormalizedReport, ReportEnvelope, ScannerInfo, VulnMatch } from "../report-model.js";
import { EXPECTED_FORMATS, VulnReportFormatError } from "./format-error.js";
import { grypeMatch, grypeScanner } from "./grype.js";
import { type JsonSource, streamJsonPaths } from "./json-paths.js";
import { asObject, optString } from "./json-values.js";
import { trivyVulnerability } from "./trivy.js";

/** The predicate type of a cosign vulnerability attestation (older cosign writes it without `https://`). */
export const COSIGN_VULN_PREDICATE = "https://cosign.sigstore.dev/attestation/vuln/v1";

/** The DSSE payload type of an in-toto statement. */
export const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";

// Where a scanner's own output can sit: at the root (bare), in a cosign predicate (`scanner.result`,
// or the spec's plural `scanners[].result`), or in an in-toto statement's predicate.
const RESULT_ROOTS: readonly [string, ReportEnvelope][] = [
  ["$", "bare"],
  ["$.scanner.result", "cosign-predicate"],
  ["$.scanners.*.result", "cosign-predicate"],
  ["$.predicate.scanner.result", "in-toto-statement"],
  ["$.predicate.scanners.*.result", "in-toto-statement"],
];
const RESULT_FIELDS = [
  "matches.*",
  "descriptor",
  "SchemaVersion",
  "Trivy",
  "Results.*.Type",
  "Results.*.Vulnerabilities.*",
] as const;
const ENVELOPE_PATHS = [
  "$.payloadType",
  "$.payload",
  // A Sigstore bundle (cosign v3's OCI 1.1 attestations) carries the DSSE envelope as a field.
  "$.dsseEnvelope.payloadType",
  "$.dsseEnvelope.payload",
  "$.predicateType",
  "$.scanner.version",
  "$.predicate.scanner.version",
];
const PATHS = [
  ...ENVELOPE_PATHS,
  ...RESULT_ROOTS.flatMap(([root]) => RESULT_FIELDS.map((f) => `${root}.${f}`)),
];

/** What the streamed pass collected. */
interface Collected {
  root?: string;
  envelope?: ReportEnvelope;
  grypeMatches: VulnMatch[];
  grypeDescriptor?: unknown;
  schemaVersion?: unknown;
  trivyVersion?: string;
  trivyTypes: Map<number, string>;
  trivyMatches: { result: number; match: VulnMatch }[];
  payloadType?: unknown;
  payload?: unknown;
  predicateType?: unknown;
  predicateScannerVersion?: string;
}

function collect(hit: { path: string; indices: number[]; value: unknown }, into: Collected): void {
  const { path, value } = hit;
  switch (path) {
    case "$.payloadType":
    case "$.dsseEnvelope.payloadType":
      into.payloadType = value;
      return;
    case "$.payload":
    case "$.dsseEnvelope.payload":
      into.payload = value;
      return;
    case "$.predicateType":
      into.predicateType = value;
      return;
    case "$.scanner.version":
    case "$.predicate.scanner.version":
      if (typeof value === "string") into.predicateScannerVersion = value;
      return;
  }
  const root = RESULT_ROOTS.find(
    ([r]) => path.startsWith(`${r}.`) && RESULT_FIELDS.includes(path.slice(r.length + 1) as never),
  );
  if (!root) return;
  const [rootPath, envelope] = root;
  if (into.root !== undefined && into.root !== rootPath) {
    throw new VulnReportFormatError(
      `the report holds scanner output in two places (${into.root}, ${rootPath})`,
    );
  }
  into.root = rootPath;
  into.envelope = envelope;
  // The result's own indices follow the root's (a `scanners.*` root contributes one).
  const own = hit.indices.slice(rootPath.split("*").length - 1);
  switch (path.slice(rootPath.length + 1)) {
    case "matches.*":
      into.grypeMatches.push(grypeMatch(value, own[0] ?? 0));
      return;
    case "descriptor":
      into.grypeDescriptor = value;
      return;
    case "SchemaVersion":
      into.schemaVersion = value;
      return;
    case "Trivy":
      if (typeof value === "object" && value !== null)
        into.trivyVersion = optString(asObject(value, "Trivy"), "Version", "Trivy");
      return;
    case "Results.*.Type":
      into.trivyTypes.set(own[0] ?? 0, typeof value === "string" ? value : "");
      return;
    case "Results.*.Vulnerabilities.*": {
      const [result = 0, item = 0] = own;
      into.trivyMatches.push({
        result,
        match: trivyVulnerability(value, `Results[${result}].Vulnerabilities[${item}]`, ""),
      });
      return;
    }
  }
}

function isCosignVulnPredicate(type: unknown): boolean {
  return type === COSIGN_VULN_PREDICATE || type === COSIGN_VULN_PREDICATE.slice("https://".length);
}

function decodeDssePayload(collected: Collected): Uint8Array {
  if (collected.payloadType !== IN_TOTO_PAYLOAD_TYPE) {
    throw new VulnReportFormatError(
      `the DSSE envelope's payloadType is ${JSON.stringify(collected.payloadType)}; expected ${IN_TOTO_PAYLOAD_TYPE}`,
    );
  }
  const payload = collected.payload;
  if (typeof payload !== "string" || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(payload)) {
    throw new VulnReportFormatError("the DSSE envelope's payload must be a base64 string");
  }
  return Buffer.from(payload, payload.includes("-") || payload.includes("_") ? "base64url" : "base64");
}

function scannerOutput(collected: Collected, envelope: ReportEnvelope): NormalizedReport {
  const hasGrype = collected.grypeDescriptor !== undefined || collected.grypeMatches.length > 0;
  const hasTrivy = collected.schemaVersion !== undefined;
  if (hasGrype && hasTrivy) throw new VulnReportFormatError("the report mixes Grype and Trivy fields");
  if (hasGrype) {
    const descriptor = collected.grypeDescriptor ?? { name: "grype" };
    const name = optString(asObject(descriptor, "descriptor"), "name", "descriptor");
    if (name !== "grype" && name !== "") {
      throw new VulnReportFormatError(`descriptor.name is ${JSON.stringify(name)}; expected "grype"`);
    }
    const scanner = grypeScanner(descriptor);
    if (scanner.version === "" && collected.predicateScannerVersion)
      scanner.version = collected.predicateScannerVersion;
    return { scanner, envelope, matches: collected.grypeMatches };
  }
  if (hasTrivy) {
    if (collected.schemaVersion !== 2) {
      throw new VulnReportFormatError(
        `Trivy SchemaVersion ${JSON.stringify(collected.schemaVersion)} is not supported; expected SchemaVersion 2 (trivy -f json, Trivy 0.20 or later)`,
      );
    }
    const scanner: ScannerInfo = {
      name: "TRIVY",
      version: collected.trivyVersion || collected.predicateScannerVersion || "",
    };
    const matches = collected.trivyMatches.map(({ result, match }) => ({
      ...match,
      packageType: collected.trivyTypes.get(result) ?? "",
    }));
    return { scanner, envelope, matches };
  }
  throw new VulnReportFormatError(
    `the document is not a vulnerability report Wharf reads; ${EXPECTED_FORMATS}`,
  );
}

async function parseLevel(source: JsonSource, insideDsse: boolean): Promise<NormalizedReport> {
  const collected: Collected = { grypeMatches: [], trivyTypes: new Map(), trivyMatches: [] };
  await streamJsonPaths(source, PATHS, (hit) => collect(hit, collected));
  if (collected.payloadType !== undefined || collected.payload !== undefined) {
    if (insideDsse) throw new VulnReportFormatError("a DSSE envelope inside a DSSE envelope is not a report");
    const inner = await parseLevel(decodeDssePayload(collected), true);
    if (inner.envelope !== "in-toto-statement") {
      throw new VulnReportFormatError(
        "the DSSE envelope must carry an in-toto statement with a vulnerability predicate",
      );
    }
    return { ...inner, envelope: "dsse-envelope" };
  }
  if (collected.predicateType !== undefined) {
    if (!isCosignVulnPredicate(collected.predicateType)) {
      throw new VulnReportFormatError(
        `the in-toto statement's predicateType ${JSON.stringify(collected.predicateType)} is not a vulnerability attestation; expected ${COSIGN_VULN_PREDICATE}`,
      );
    }
    if (collected.envelope !== "in-toto-statement") {
      throw new VulnReportFormatError("the vulnerability attestation has no predicate.scanner.result");
    }
  } else if (collected.envelope === "in-toto-statement") {
    throw new VulnReportFormatError(
      `the in-toto statement has no predicateType; expected ${COSIGN_VULN_PREDICATE}`,
    );
  }
  if (insideDsse && collected.envelope !== "in-toto-statement") {
    throw new VulnReportFormatError(
      "the DSSE envelope must carry an in-toto statement with a vulnerability predicate",
    );
  }
  return scannerOutput(collected, collected.envelope ?? "bare");
}

/**
 * Parses a vulnerability report, detecting its format: Grype `-o json`, Trivy `-f json`
 * (SchemaVersion 2 only), or a cosign vulnerability attestation (predicate type
 * {@link COSIGN_VULN_PREDICATE}, with or without `https://`) wrapping either — the bare predicate,
 * an in-toto statement, or a DSSE envelope of one (alone or in a Sigstore bundle's `dsseEnvelope`). The document is streamed: only each match is
 * built, one at a time (a DSSE payload, being one base64 string, is held whole). Rejects with
 * {@link VulnReportFormatError} saying what was found and what was expected.
 */
export function parseVulnReport(source: JsonSource): Promise<NormalizedReport> {
  return parseLevel(source, false);
}
