import { isWharfApiError } from "wharf/sdk";

/** One field violation of the server's answer. */
export interface Violation {
  field: string;
  description: string;
}

/**
 * The field violations of `error` at `prefix` or below it (`tag_patterns` takes `tag_patterns[2]`,
 * `rules[0]` takes `rules[0].keepLatest`); [] for anything but an API error.
 */
export function violationsUnder(error: unknown, prefix: string): Violation[] {
  if (!isWharfApiError(error)) return [];
  return error.fieldViolations.filter(
    (v) => v.field === prefix || v.field.startsWith(`${prefix}[`) || v.field.startsWith(`${prefix}.`),
  );
}

/** Exactly the violations of `field` (no deeper ones). */
export function violationsAt(error: unknown, field: string): Violation[] {
  if (!isWharfApiError(error)) return [];
  return error.fieldViolations.filter((v) => v.field === field);
}
