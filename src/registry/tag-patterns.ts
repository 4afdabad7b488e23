/**
 * The glob patterns of registry governance (immutability rules, retention rules): `*` (any run of
 * characters but `/`, empty included), `**` (any run, `/` included: repo patterns only), `?`
 * (exactly one character but `/`) and `[…]` (one character of a set or range, `[!…]`/`[^…]`
 * negated). A pattern list may hold exclusions: a pattern starting `!` (e.g. `["*", "!latest"]`).
 * Matching is case-sensitive and of the whole name. picomatch does the matching; this module only
 * fixes the dialect (no braces, no extglobs) and validates what callers store.
 */
import picomatch from "picomatch";

/** What a pattern may hold: tag-name characters, `/` for repo paths, and the glob characters. */
const PATTERN_SHAPE = /^[A-Za-z0-9_.\-/*?[\]^!]{1,256}$/;

const PICOMATCH_OPTIONS: picomatch.PicomatchOptions = {
  dot: true,
  nobrace: true,
  noextglob: true,
  noglobstar: false,
  posix: true,
};

/** Which names a pattern applies to: tags (no `/` allowed) or repo paths below a parent. */
export type PatternKind = "tag" | "repo";

/**
 * Why `pattern` is not a valid pattern of `kind`, or undefined when it is. A leading `!` (an
 * exclusion) is allowed only when `allowExclusion`; the rest must be 1–256 characters of
 * `[A-Za-z0-9_.-]`, `*`, `?`, `[…]`, and `/` in repo patterns, with balanced brackets.
 */
export function patternProblem(
  pattern: string,
  kind: PatternKind,
  allowExclusion: boolean,
): string | undefined {
  const body = allowExclusion && pattern.startsWith("!") ? pattern.slice(1) : pattern;
  if (!PATTERN_SHAPE.test(body) || (kind === "tag" && body.includes("/"))) {
    const slash = kind === "repo" ? ' "/",' : "";
    return `pattern "${pattern}" may hold only letters, digits, "_", ".", "-",${slash} "*", "?" and "[…]" (1 to 256 characters)${allowExclusion ? ', after an optional leading "!"' : ""}`;
  }
  if (!bracketsBalanced(body)) return `pattern "${pattern}" has an unclosed or empty "[…]"`;
  if (body.startsWith("!")) {
    return allowExclusion
      ? `pattern "${pattern}" has more than one leading "!"`
      : `pattern "${pattern}" cannot be an exclusion here`;
  }
  return undefined;
}

/**
 * A compiled single pattern (valid, without a leading `!`: see {@link patternProblem}): true when
 * `name` matches it as a whole.
 */
export function globMatcher(pattern: string): (name: string) => boolean {
  return picomatch(pattern, PICOMATCH_OPTIONS);
}

/**
 * A compiled pattern list: a name matches when it matches at least one inclusion (every name does
 * when the list holds only exclusions) and no exclusion. An empty list matches nothing. Patterns
 * are assumed valid (see {@link patternProblem}).
 */
export function patternListMatcher(patterns: readonly string[]): (name: string) => boolean {
  if (patterns.length === 0) return () => false;
  const included = patterns.filter((p) => !p.startsWith("!")).map(globMatcher);
  const excluded = patterns.filter((p) => p.startsWith("!")).map((p) => globMatcher(p.slice(1)));
  return (name) => (included.length === 0 || included.some((m) => m(name))) && !excluded.some((m) => m(name));
}

/** True when every `[` opens a non-empty set closed by a later `]`. */
function bracketsBalanced(pattern: string): boolean {
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "]") return false;
    if (c !== "[") {
      i += 1;
      continue;
    }
    let j = i + 1;
    if (pattern[j] === "!" || pattern[j] === "^") j += 1;
    const close = pattern.indexOf("]", j);
    if (close === -1 || close === i + 1) return false;
    if (pattern.slice(i + 1, close).includes("[")) return false;
    i = close + 1;
  }
  return true;
}
