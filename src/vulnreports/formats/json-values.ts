import { VulnReportFormatError } from "./format-error.js";

// Defensive reads of scanner JSON: a wrongly typed field is a format error naming the field, never
// a TypeError deep in a mapper.

/** A JSON object. */
export type JsonObject = Record<string, unknown>;

/** `value` when it is an object; throws naming `what` otherwise. */
export function asObject(value: unknown, what: string): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new VulnReportFormatError(`${what} must be a JSON object`);
  }
  return value as JsonObject;
}

/** `obj[key]` as an object, undefined when absent or null; throws when it is something else. */
export function optObject(obj: JsonObject, key: string, what: string): JsonObject | undefined {
  const value = obj[key];
  return value === undefined || value === null ? undefined : asObject(value, `${what}.${key}`);
}

/** `obj[key]` as an array, [] when absent or null; throws when it is something else. */
export function optArray(obj: JsonObject, key: string, what: string): unknown[] {
  const value = obj[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new VulnReportFormatError(`${what}.${key} must be an array`);
  return value;
}

/** `obj[key]` as a string, "" when absent or null; throws when it is something else. */
export function optString(obj: JsonObject, key: string, what: string): string {
  const value = obj[key];
  if (value === undefined || value === null) return "";
  if (typeof value !== "string") throw new VulnReportFormatError(`${what}.${key} must be a string`);
  return value;
}

/** `obj[key]` as a finite number, undefined when absent or null; throws when it is something else. */
export function optNumber(obj: JsonObject, key: string, what: string): number | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new VulnReportFormatError(`${what}.${key} must be a number`);
  }
  return value;
}

/** The strings of an array field, [] when absent; throws when an element is not a string. */
export function optStrings(obj: JsonObject, key: string, what: string): string[] {
  return optArray(obj, key, what).map((v, i) => {
    if (typeof v !== "string") throw new VulnReportFormatError(`${what}.${key}[${i}] must be a string`);
    return v;
  });
}

/** `values` without empty strings and duplicates, first occurrence kept. */
export function distinct(values: readonly string[]): string[] {
  return [...new Set(values.filter((v) => v !== ""))];
}

/** An RFC 3339 time as ms since the epoch, undefined when empty or unparsable. */
export function parseTime(text: string): number | undefined {
  if (text === "") return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}
