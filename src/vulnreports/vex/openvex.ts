/**
 * OpenVEX documents (https://github.com/openvex/spec, v0.2.0 and the earlier `https://openvex.dev/ns`
 * form), read strictly: a document Wharf would misread is refused with a {@link VexFormatError}
 * naming the field. Accepted wrappings: the bare document, an in-toto statement whose predicate is
 * the document (what `cosign attest --type openvex` signs), and a DSSE envelope of such a statement
 * (alone or as a Sigstore bundle's `dsseEnvelope`).
 */

/** Largest VEX document accepted by default: 4 MiB (real documents are kilobytes). */
export const DEFAULT_VEX_MAX_BYTES = 4 * 1024 * 1024;

/** The OpenVEX context prefix (`https://openvex.dev/ns`, `https://openvex.dev/ns/v0.2.0`). */
export const OPENVEX_CONTEXT = "https://openvex.dev/ns";

/** Artifact and layer media type of an OpenVEX document pushed as a referrer. */
export const OPENVEX_MEDIA_TYPE = "application/vnd.openvex+json";

const IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json";

/** The statuses of the OpenVEX spec. */
export const VEX_STATUSES = ["not_affected", "affected", "fixed", "under_investigation"] as const;
export type VexStatus = (typeof VEX_STATUSES)[number];

/** The justification labels of the OpenVEX spec (for `not_affected`). */
export const VEX_JUSTIFICATIONS = [
  "component_not_present",
  "vulnerable_code_not_present",
  "vulnerable_code_not_in_execute_path",
  "vulnerable_code_cannot_be_controlled_by_adversary",
  "inline_mitigations_already_exist",
] as const;

/** A document that is not OpenVEX Wharf reads; `message` names the field and what was expected. */
export class VexFormatError extends Error {
  override readonly name = "VexFormatError";
}

/** A product (or subcomponent) of a statement: its identifiers. */
export interface VexProduct {
  /** `@id`; "" when only identifiers are given. */
  id: string;
  /** `identifiers.purl`; "". */
  purl: string;
  /** `hashes["sha-256"]` (hex), "" when absent. */
  sha256: string;
  subcomponents: string[];
}

/** One statement, with the document's values cascaded into it. */
export interface VexStatement {
  vulnerability: string;
  aliases: string[];
  status: VexStatus;
  justification: string;
  impactStatement: string;
  actionStatement: string;
  /** The statement's timestamp, else the document's (ms). */
  effectiveTime: number;
  products: VexProduct[];
}

/** A parsed document. */
export interface VexDocument {
  id: string;
  author: string;
  /** The document's `timestamp` (ms). */
  issueTime: number;
  /** How it arrived: bare, in an in-toto statement, or in a DSSE envelope of one. */
  envelope: "bare" | "in-toto-statement" | "dsse-envelope";
  statements: VexStatement[];
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function object(value: unknown, field: string): Json {
  if (!isObject(value)) throw new VexFormatError(`${field} must be an object`);
  return value;
}

function string(o: Json, key: string, field: string, required: boolean): string {
  const value = o[key];
  if (value === undefined && !required) return "";
  if (typeof value !== "string" || (required && value === "")) {
    throw new VexFormatError(
      `${field}${field ? "." : ""}${key} must be ${required ? "a non-empty" : "a"} string`,
    );
  }
  return value;
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

function time(o: Json, key: string, field: string, required: boolean): number | undefined {
  const text = string(o, key, field, required);
  if (text === "") return undefined;
  const ms = RFC3339.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms)) {
    throw new VexFormatError(
      `${field}${field ? "." : ""}${key} must be an RFC 3339 date-time, not ${JSON.stringify(text)}`,
    );
  }
  return ms;
}

function strings(value: unknown, field: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    throw new VexFormatError(`${field} must be an array of strings`);
  }
  return value as string[];
}

function component(value: unknown, field: string, withSubcomponents: boolean): VexProduct {
  const o = object(value, field);
  const id = string(o, "@id", field, false);
  const identifiers = o.identifiers === undefined ? {} : object(o.identifiers, `${field}.identifiers`);
  const purl = string(identifiers, "purl", `${field}.identifiers`, false);
  const hashes = o.hashes === undefined ? {} : object(o.hashes, `${field}.hashes`);
  const sha256 = string(hashes, "sha-256", `${field}.hashes`, false).toLowerCase();
  if (id === "" && purl === "" && sha256 === "") {
    throw new VexFormatError(`${field} needs an @id or identifiers.purl`);
  }
  const subcomponents: string[] = [];
  if (withSubcomponents && o.subcomponents !== undefined) {
    if (!Array.isArray(o.subcomponents)) throw new VexFormatError(`${field}.subcomponents must be an array`);
    for (const [i, sub] of o.subcomponents.entries()) {
      const s = component(sub, `${field}.subcomponents[${i}]`, false);
      subcomponents.push(s.purl || s.id);
    }
  }
  return { id, purl, sha256, subcomponents };
}

function statement(value: unknown, i: number, documentTime: number): VexStatement {
  const field = `statements[${i}]`;
  const o = object(value, field);
  let vulnerability: string;
  let aliases: string[] = [];
  if (typeof o.vulnerability === "string") {
    // The spec before v0.2.0 gave the vulnerability as a bare string.
    vulnerability = o.vulnerability;
  } else {
    const v = object(o.vulnerability, `${field}.vulnerability`);
    vulnerability = string(v, "name", `${field}.vulnerability`, true);
    aliases = strings(v.aliases, `${field}.vulnerability.aliases`);
  }
  if (vulnerability === "")
    throw new VexFormatError(`${field}.vulnerability.name must be a non-empty string`);
  const status = string(o, "status", field, true);
  if (!(VEX_STATUSES as readonly string[]).includes(status)) {
    throw new VexFormatError(
      `${field}.status is ${JSON.stringify(status)}; expected one of ${VEX_STATUSES.join(", ")}`,
    );
  }
  const justification = string(o, "justification", field, false);
  if (justification !== "" && !(VEX_JUSTIFICATIONS as readonly string[]).includes(justification)) {
    throw new VexFormatError(
      `${field}.justification is ${JSON.stringify(justification)}; expected one of ${VEX_JUSTIFICATIONS.join(", ")}`,
    );
  }
  const impactStatement = string(o, "impact_statement", field, false);
  const actionStatement = string(o, "action_statement", field, false);
  if (status === "not_affected" && justification === "" && impactStatement === "") {
    throw new VexFormatError(
      `${field} says not_affected, so it needs a justification or an impact_statement`,
    );
  }
  if (status === "affected" && actionStatement === "") {
    throw new VexFormatError(`${field} says affected, so it needs an action_statement`);
  }
  if (o.products === undefined || !Array.isArray(o.products) || o.products.length === 0) {
    throw new VexFormatError(`${field}.products must list the products the statement is about`);
  }
  const products = o.products.map((p, j) =>
    // The spec before v0.2.0 gave products as bare identifier strings.
    typeof p === "string"
      ? { id: p, purl: "", sha256: "", subcomponents: [] }
      : component(p, `${field}.products[${j}]`, true),
  );
  const own = time(o, "timestamp", field, false);
  return {
    vulnerability,
    aliases,
    status: status as VexStatus,
    justification,
    impactStatement,
    actionStatement,
    effectiveTime: own ?? documentTime,
    products,
  };
}

function document(value: unknown, envelope: VexDocument["envelope"]): VexDocument {
  const o = object(value, "the document");
  const context = string(o, "@context", "", true);
  if (!context.startsWith(OPENVEX_CONTEXT)) {
    throw new VexFormatError(`@context is ${JSON.stringify(context)}; expected ${OPENVEX_CONTEXT}/v0.2.0`);
  }
  const id = string(o, "@id", "", true);
  const author = string(o, "author", "", true);
  const issueTime = time(o, "timestamp", "", true) as number;
  if (typeof o.version !== "number" && typeof o.version !== "string") {
    throw new VexFormatError("version must be a number");
  }
  if (!Array.isArray(o.statements) || o.statements.length === 0) {
    throw new VexFormatError("statements must be a non-empty array");
  }
  const statements = o.statements.map((s, i) => statement(s, i, issueTime));
  return { id, author, issueTime, envelope, statements };
}

function isVexPredicateType(type: unknown): boolean {
  return typeof type === "string" && type.startsWith(OPENVEX_CONTEXT);
}

function unwrap(value: unknown, insideDsse: boolean): VexDocument {
  const o = object(value, "the document");
  const dsse = isObject(o.dsseEnvelope) ? o.dsseEnvelope : o.payloadType !== undefined ? o : undefined;
  if (dsse) {
    if (insideDsse) throw new VexFormatError("a DSSE envelope inside a DSSE envelope is not a VEX document");
    if (dsse.payloadType !== IN_TOTO_PAYLOAD_TYPE) {
      throw new VexFormatError(
        `the DSSE envelope's payloadType is ${JSON.stringify(dsse.payloadType)}; expected ${IN_TOTO_PAYLOAD_TYPE}`,
      );
    }
    if (typeof dsse.payload !== "string" || !/^[A-Za-z0-9+/_-]*={0,2}$/.test(dsse.payload)) {
      throw new VexFormatError("the DSSE envelope's payload must be a base64 string");
    }
    const bytes = Buffer.from(dsse.payload, /[-_]/.test(dsse.payload) ? "base64url" : "base64");
    const inner = unwrap(json(bytes), true);
    if (inner.envelope !== "in-toto-statement") {
      throw new VexFormatError("the DSSE envelope must carry an in-toto statement with an OpenVEX predicate");
    }
    return { ...inner, envelope: "dsse-envelope" };
  }
  if (o.predicateType !== undefined || o._type !== undefined) {
    if (!isVexPredicateType(o.predicateType)) {
      throw new VexFormatError(
        `the in-toto statement's predicateType is ${JSON.stringify(o.predicateType)}; expected ${OPENVEX_CONTEXT} (cosign attest --type openvex)`,
      );
    }
    return document(o.predicate, "in-toto-statement");
  }
  if (insideDsse)
    throw new VexFormatError("the DSSE envelope must carry an in-toto statement with an OpenVEX predicate");
  return document(o, "bare");
}

function json(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch (err) {
    throw new VexFormatError(
      `the document is not UTF-8 JSON (${err instanceof Error ? err.message : String(err)})`,
    );
  }
}

/**
 * Parses an OpenVEX document (bare, in an in-toto statement, or in a DSSE envelope of one) from
 * its bytes. Rejects with {@link VexFormatError} when it is larger than `maxBytes`, not JSON, or
 * not a document the spec allows (a missing required field, an unknown status or justification, a
 * `not_affected` statement without justification or impact statement, an `affected` one without an
 * action statement, a bad date-time).
 */
export function parseOpenVex(bytes: Uint8Array, maxBytes = DEFAULT_VEX_MAX_BYTES): VexDocument {
  if (bytes.length > maxBytes) {
    throw new VexFormatError(`the document is larger than ${maxBytes} bytes`);
  }
  return unwrap(json(bytes), false);
}
