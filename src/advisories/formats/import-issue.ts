/**
 * Why one record (or one file) of an import was not taken: where in the file (`$.affected[0]` for
 * JSON, `advisories[3].events[1]` for YAML, `line 12` for line-based files), the offending field
 * and a message for people.
 */
export interface ImportIssue {
  location: string;
  field: string;
  message: string;
}

/** A parse result: the value, or the issue that rejected it. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; issue: ImportIssue };

/** `{ok: false}` with an issue. */
export function rejected<T>(location: string, field: string, message: string): Parsed<T> {
  return { ok: false, issue: { location, field, message } };
}

/** Joins a JSON path and a property or index: `$.affected` + 0 → `$.affected[0]`. */
export function jsonPath(base: string, key: string | number): string {
  if (typeof key === "number") return `${base}[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}
