import type { LibraryEcosystemName } from "../storage/library-store.js";
import { LIBRARY_ECOSYSTEMS, parseEcosystem } from "./ecosystems.js";
import { versionProblem } from "./version-order.js";

/** One line of a libraries JSONL file: a published version of an artifact, validated. */
export interface LibraryVersionRecord {
  ecosystem: LibraryEcosystemName;
  name: string;
  version: string;
  description: string;
  /** Milliseconds since the Unix epoch. */
  publishTime: number;
  sizeBytes: bigint;
  remediated: boolean;
}

/** What is wrong with a line: the field (`""` for the line as a whole) and why. */
export interface RecordProblem {
  field: string;
  message: string;
}

const MAX_INT64 = 2n ** 63n - 1n;
const MAX_DESCRIPTION = 4096;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:[Zz]|[+-]\d{2}:\d{2})$/;

// Package names as each registry allows them.
const NAME_RULES: Record<LibraryEcosystemName, { pattern: RegExp; expected: string }> = {
  JAVA: { pattern: /^[A-Za-z0-9_.-]+:[A-Za-z0-9_.-]+$/, expected: "groupId:artifactId" },
  PYTHON: {
    pattern: /^(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9])$/,
    expected: "a PyPI project name (letters, digits, . _ -)",
  },
  JAVASCRIPT: {
    pattern: /^(?:@[a-z0-9~-][a-z0-9._~-]*\/)?[a-z0-9~-][a-z0-9._~-]*$/,
    expected: "an npm package name (lower case, optionally @scope/)",
  },
};

class Problem extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

function requiredString(obj: Record<string, unknown>, field: string): string {
  const value = obj[field];
  if (value === undefined || value === null || value === "") throw new Problem(field, "is required");
  if (typeof value !== "string") throw new Problem(field, `must be a string (got ${JSON.stringify(value)})`);
  return value;
}

function parsePublishTime(obj: Record<string, unknown>): number {
  const text = requiredString(obj, "publishTime");
  const ms = RFC3339.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(ms))
    throw new Problem("publishTime", `"${text}" is not an RFC 3339 time (2024-05-01T12:00:00Z)`);
  return ms;
}

function parseSize(obj: Record<string, unknown>): bigint {
  const value = obj.sizeBytes;
  if (value === undefined || value === null) return 0n;
  let size: bigint | undefined;
  if (typeof value === "number" && Number.isSafeInteger(value)) size = BigInt(value);
  else if (typeof value === "string" && /^\d{1,19}$/.test(value)) size = BigInt(value);
  if (size === undefined || size < 0n || size > MAX_INT64) {
    throw new Problem(
      "sizeBytes",
      `must be a non-negative integer or a decimal string (got ${JSON.stringify(value)})`,
    );
  }
  return size;
}

function parseRecord(obj: Record<string, unknown>): LibraryVersionRecord {
  const ecosystemText = requiredString(obj, "ecosystem");
  const ecosystem = parseEcosystem(ecosystemText);
  if (ecosystem === undefined) {
    const known = LIBRARY_ECOSYSTEMS.join(", ");
    throw new Problem("ecosystem", `unknown ecosystem "${ecosystemText}" (expected one of ${known})`);
  }
  const name = requiredString(obj, "name");
  const rule = NAME_RULES[ecosystem];
  if (name.length > 214 || !rule.pattern.test(name)) {
    throw new Problem("name", `"${name}" is not ${rule.expected}`);
  }
  const version = requiredString(obj, "version");
  const problem = versionProblem(ecosystem, version);
  if (problem !== undefined || version.length > 128) {
    throw new Problem("version", problem ?? "is longer than 128 characters");
  }
  const description = obj.description ?? "";
  if (typeof description !== "string") throw new Problem("description", "must be a string");
  if (description.length > MAX_DESCRIPTION) {
    throw new Problem("description", `is longer than ${MAX_DESCRIPTION} characters`);
  }
  const remediated = obj.remediated ?? false;
  if (typeof remediated !== "boolean") throw new Problem("remediated", "must be true or false");
  return {
    ecosystem,
    name,
    version,
    description,
    publishTime: parsePublishTime(obj),
    sizeBytes: parseSize(obj),
    remediated,
  };
}

/**
 * Parses one JSONL line: `{ecosystem, name, version, description, publishTime, sizeBytes,
 * remediated}`. `ecosystem`, `name`, `version` and `publishTime` (RFC 3339) are required;
 * `description` defaults to "", `sizeBytes` (a number or a decimal string) to 0, `remediated` to
 * false; other fields are ignored. The ecosystem is its enum name or short form in any case;
 * names and versions must be valid for the ecosystem. Returns the record, or the first problem.
 */
export function parseLibraryVersionLine(
  line: string,
): { record: LibraryVersionRecord } | { problem: RecordProblem } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { problem: { field: "", message: `not valid JSON (${(err as Error).message})` } };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { problem: { field: "", message: "expected a JSON object" } };
  }
  try {
    return { record: parseRecord(value as Record<string, unknown>) };
  } catch (err) {
    if (err instanceof Problem) return { problem: { field: err.field, message: err.message } };
    throw err;
  }
}
