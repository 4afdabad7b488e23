import { invalidArgument } from "./errors.js";

/**
 * One component of an OCI repository path (distribution spec): lowercase letters and digits, with
 * single `.` or `_`, a double `__`, or runs of `-` between them. Every group name and repo name is
 * such a component, because an image path is `<org>/<subgroups…>/<repo>`.
 */
export const PATH_COMPONENT_SOURCE = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";

/** PATH_COMPONENT_SOURCE anchored: one whole component. */
export const PATH_COMPONENT = new RegExp(`^${PATH_COMPONENT_SOURCE}$`);

/** A whole repository path: components joined by `/` (length checked separately). */
export const REPOSITORY_PATH = new RegExp(`^${PATH_COMPONENT_SOURCE}(?:/${PATH_COMPONENT_SOURCE})*$`);

/** Longest group (organization or folder) name. */
export const MAX_GROUP_NAME_LENGTH = 63;
/** Longest repo name (the last path component). */
export const MAX_REPO_NAME_LENGTH = 128;
/** Longest repository path, components and slashes together (what registry clients accept). */
export const MAX_REPOSITORY_PATH_LENGTH = 255;

/**
 * What is wrong with `value` as a path component of at most `maxLength` characters (at least one),
 * as a sentence starting with "must", or undefined when it is a valid one.
 */
export function pathComponentProblem(value: string, maxLength: number): string | undefined {
  if (PATH_COMPONENT.test(value) && value.length <= maxLength) return undefined;
  return `must be 1 to ${maxLength} characters matching "^${PATH_COMPONENT_SOURCE}$" (a registry path component: lowercase letters and digits separated by ".", "_", "__" or dashes)`;
}

/**
 * Throws INVALID_ARGUMENT naming `field` unless `value` is a group name usable in registry paths:
 * a path component of 1 to MAX_GROUP_NAME_LENGTH characters. The description starts with
 * `subject` (default: the field's name), e.g. `group name "x"` where a path holds several names.
 */
export function validateGroupName(value: string, field = "name", subject = field): void {
  const problem = pathComponentProblem(value, MAX_GROUP_NAME_LENGTH);
  if (problem) throw invalidArgument(field, `${subject} ${problem}`);
}

/**
 * Throws INVALID_ARGUMENT naming `field` unless `value` is a repo name usable in registry paths:
 * a path component of 1 to MAX_REPO_NAME_LENGTH characters. `subject` as for validateGroupName.
 */
export function validateRepoName(value: string, field = "name", subject = field): void {
  const problem = pathComponentProblem(value, MAX_REPO_NAME_LENGTH);
  if (problem) throw invalidArgument(field, `${subject} ${problem}`);
}
