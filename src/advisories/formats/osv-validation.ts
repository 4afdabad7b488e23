import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { type ImportIssue, jsonPath } from "./import-issue.js";
import { OSV_SCHEMA } from "./osv-schema.js";

const ajv = new Ajv2020({ allErrors: false, strict: false });
addFormats.default(ajv);
const validate = ajv.compile(OSV_SCHEMA);

/** `/affected/0/package` → `$.affected[0].package` under `base`. */
function pathOf(base: string, instancePath: string): string {
  let path = base;
  for (const raw of instancePath.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    path = jsonPath(path, /^\d+$/.test(key) ? Number(key) : key);
  }
  return path;
}

/** The most specific of Ajv's errors: the deepest path, preferring a named missing property. */
function bestError(errors: readonly ErrorObject[]): ErrorObject | undefined {
  let best: ErrorObject | undefined;
  for (const e of errors) {
    if (best === undefined || e.instancePath.length > best.instancePath.length) best = e;
  }
  return best;
}

/**
 * Validates one record against the OSV JSON Schema. Undefined when valid; otherwise the first
 * problem, located under `base` (the record's own JSON path in its file, `$` or `$[3]`).
 */
export function osvSchemaIssue(record: unknown, base: string): ImportIssue | undefined {
  if (validate(record)) return undefined;
  const error = bestError(validate.errors ?? []);
  if (error === undefined) return { location: base, field: "", message: "not an OSV record" };
  const missing = (error.params as { missingProperty?: string }).missingProperty;
  const location = pathOf(base, error.instancePath);
  const segments = error.instancePath.split("/").filter((s) => s !== "" && !/^\d+$/.test(s));
  const field = missing ?? segments.at(-1) ?? "";
  const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
  const message = allowed ? `${error.message}: ${allowed.join(", ")}` : (error.message ?? "invalid");
  return { location: missing ? jsonPath(location, missing) : location, field, message };
}
