/**
 * Tag globs of EOL rules (`wharf import eol --match ORG/REPO:GLOB`): tag-name characters
 * (`[A-Za-z0-9_.-]`) plus `*` (any run, empty included) and `?` (exactly one character), at most
 * 128 characters. The store matches them in SQL; `tagGlobMatches` is the same rule in code.
 */

const GLOB_SHAPE = /^[A-Za-z0-9_.*?-]{1,128}$/;

/** Why `glob` is not a tag glob, or undefined when it is one. */
export function tagGlobProblem(glob: string): string | undefined {
  if (GLOB_SHAPE.test(glob)) return undefined;
  return `tag glob "${glob}" may hold only letters, digits, "_", ".", "-", "*" and "?" (1 to 128 characters)`;
}

/** True when `tagName` matches `glob` as a whole (case-sensitive). */
export function tagGlobMatches(glob: string, tagName: string): boolean {
  const source = glob.replace(/[.*?]/g, (c) => (c === "*" ? ".*" : c === "?" ? "." : "\\."));
  return new RegExp(`^${source}$`, "s").test(tagName);
}

/**
 * How specific a glob is, to choose among several rules matching one tag: more literal characters
 * first, then fewer wildcards. `3.10*` beats `3.*`, which beats `*`.
 */
export function globSpecificity(glob: string): [number, number] {
  const wildcards = glob.replace(/[^*?]/g, "").length;
  return [glob.length - wildcards, -wildcards];
}
