import { invalidArgument } from "./errors.js";

/** Names of groups, identities, roles (spec): at least one of a-z, 0-9, space, dot, underscore, dash. */
export const NAME_PATTERN = /^[a-z0-9 ._-]{1,}$/;
/** Longest name accepted for groups, identities and roles. */
export const MAX_NAME_LENGTH = 63;
/** Descriptions: printable characters and spaces, at most 512. */
export const DESCRIPTION_PATTERN = /^[\S ]{0,512}$/;

/**
 * Validates a resource name: throws INVALID_ARGUMENT `name: name must match "^[a-z0-9 ._-]{1,}$"`
 * (the spec's exact message) or a length violation.
 */
export function validateName(value: string, field = "name"): void {
  if (!NAME_PATTERN.test(value)) {
    throw invalidArgument(field, `${field} must match "${NAME_PATTERN.source}"`);
  }
  if (value.length > MAX_NAME_LENGTH) {
    throw invalidArgument(field, `${field} must be at most ${MAX_NAME_LENGTH} characters`);
  }
}

/** Validates a description: printable characters and spaces, at most 512. */
export function validateDescription(value: string, field = "description"): void {
  if (!DESCRIPTION_PATTERN.test(value)) {
    throw invalidArgument(field, `${field} must be at most 512 printable characters (no tabs or newlines)`);
  }
}

/** Validates a required field is non-empty. */
export function requireNonEmpty(value: string, field: string): void {
  if (value === "") throw invalidArgument(field, "is required");
}

/** Compiles a user-supplied regular expression (anchored), or throws INVALID_ARGUMENT naming `field`. */
export function compilePattern(pattern: string, field: string): RegExp {
  try {
    return new RegExp(`^(?:${pattern})$`);
  } catch (err) {
    throw invalidArgument(field, `invalid regular expression: ${(err as Error).message}`);
  }
}
