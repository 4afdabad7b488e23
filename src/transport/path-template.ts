/**
 * `google.api.http` path templates:
 *
 * ```
 * Template = "/" Segments [ Verb ] ;
 * Segments = Segment { "/" Segment } ;
 * Segment  = "*" | "**" | LITERAL | Variable ;
 * Variable = "{" FieldPath [ "=" Segments ] "}" ;
 * Verb     = ":" LITERAL ;
 * ```
 *
 * As in grpc-gateway, `**` may be followed by more segments (`/repos/{uid=**}/readme`); a template
 * holds at most one `**`, which matches one or more path segments.
 */

/** One compiled segment: a literal, `*` (one segment) or `**` (one or more segments). */
export type TemplateSegment =
  | { kind: "literal"; value: string; variable: number }
  | { kind: "single"; variable: number }
  | { kind: "multi"; variable: number };

/** A parsed path template; `variable` in a segment indexes `variables`, -1 when unbound. */
export interface PathTemplate {
  readonly source: string;
  readonly segments: readonly TemplateSegment[];
  /** Field paths of the variables (`repo.uid`), in template order. */
  readonly variables: readonly string[];
  /** The custom verb without its colon, or undefined. */
  readonly verb: string | undefined;
  /** Index of the `**` segment, or -1. */
  readonly multiAt: number;
  /** Literal segments count; more literals = more specific. */
  readonly literalCount: number;
}

/** A request path split once for matching against many templates. */
export interface SplitPath {
  /** Raw (still percent-encoded) segments of the path. */
  readonly segments: readonly string[];
  /** The last segment's `:verb` suffix, or undefined when it has no colon. */
  readonly verb: string | undefined;
  /** `segments` with the verb suffix removed from the last one (same array when there is no verb). */
  readonly verbless: readonly string[];
}

const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const LITERAL = /^[^/{}*:]+$/;

/** Parses a template; throws an Error naming the template when it is not valid. */
export function parsePathTemplate(source: string): PathTemplate {
  const fail = (why: string): never => {
    throw new Error(`invalid path template "${source}": ${why}`);
  };
  if (!source.startsWith("/")) fail("must start with /");
  let body = source.slice(1);
  let verb: string | undefined;
  const lastSlash = body.lastIndexOf("/");
  const lastBrace = body.lastIndexOf("}");
  const colon = body.lastIndexOf(":");
  if (colon > lastSlash && colon > lastBrace) {
    verb = body.slice(colon + 1);
    body = body.slice(0, colon);
    if (!LITERAL.test(verb)) fail("bad verb");
  }
  const segments: TemplateSegment[] = [];
  const variables: string[] = [];
  for (const token of splitTopLevel(body, fail)) {
    if (token.startsWith("{")) {
      if (!token.endsWith("}")) fail(`bad variable ${token}`);
      const inner = token.slice(1, -1);
      const eq = inner.indexOf("=");
      const field = eq < 0 ? inner : inner.slice(0, eq);
      if (!FIELD_PATH.test(field)) fail(`bad field path "${field}"`);
      if (variables.includes(field)) fail(`field "${field}" bound twice`);
      const index = variables.push(field) - 1;
      const sub = eq < 0 ? "*" : inner.slice(eq + 1);
      for (const part of sub.split("/")) {
        if (part.includes("{")) fail("nested variables");
        segments.push(plainSegment(part, index, fail));
      }
    } else {
      segments.push(plainSegment(token, -1, fail));
    }
  }
  const multis = segments.filter((s) => s.kind === "multi").length;
  if (multis > 1) fail("at most one ** per template");
  return {
    source,
    segments,
    variables,
    verb,
    multiAt: segments.findIndex((s) => s.kind === "multi"),
    literalCount: segments.filter((s) => s.kind === "literal").length,
  };
}

function plainSegment(token: string, variable: number, fail: (why: string) => never): TemplateSegment {
  if (token === "*") return { kind: "single", variable };
  if (token === "**") return { kind: "multi", variable };
  if (!LITERAL.test(token)) fail(`bad segment "${token}"`);
  return { kind: "literal", value: token, variable };
}

/** Splits on "/" outside braces. */
function splitTopLevel(body: string, fail: (why: string) => never): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "{") depth++;
    else if (c === "}") depth--;
    else if (c === "/" && depth === 0) {
      out.push(body.slice(start, i));
      start = i + 1;
    }
    if (depth < 0 || depth > 1) fail("unbalanced braces");
  }
  if (depth !== 0) fail("unbalanced braces");
  out.push(body.slice(start));
  return out;
}

/** Splits a request path (no query string) once, for {@link matchPathTemplate}. */
export function splitPath(path: string): SplitPath {
  const segments = path.length > 1 ? path.slice(1).split("/") : [""];
  const last = segments[segments.length - 1] ?? "";
  const colon = last.lastIndexOf(":");
  if (colon < 0) return { segments, verb: undefined, verbless: segments };
  const verbless = segments.slice();
  verbless[verbless.length - 1] = last.slice(0, colon);
  return { segments, verb: last.slice(colon + 1), verbless };
}

/**
 * Matches a split path against a template. Returns the raw (percent-encoded) value of each
 * variable in template order, multi-segment values joined by "/", or undefined on no match.
 * Empty segments never match `*` or `**`.
 */
export function matchPathTemplate(template: PathTemplate, path: SplitPath): string[] | undefined {
  let segs: readonly string[];
  if (template.verb !== undefined) {
    if (path.verb !== template.verb) return undefined;
    segs = path.verbless;
  } else {
    segs = path.segments;
  }
  const tsegs = template.segments;
  const n = segs.length;
  const m = tsegs.length;
  if (template.multiAt < 0 ? n !== m : n < m) return undefined;
  const values: string[] = new Array(template.variables.length).fill("");
  const extra = n - m;
  for (let i = 0; i < m; i++) {
    const t = tsegs[i]!;
    if (t.kind === "multi") {
      const from = i;
      const to = i + extra;
      for (let j = from; j <= to; j++) if (segs[j] === "") return undefined;
      appendValue(values, t.variable, segs.slice(from, to + 1).join("/"));
      continue;
    }
    const s = segs[i > template.multiAt && template.multiAt >= 0 ? i + extra : i]!;
    if (t.kind === "literal") {
      if (s !== t.value) return undefined;
    } else if (s === "") {
      return undefined;
    }
    appendValue(values, t.variable, s);
  }
  return values;
}

function appendValue(values: string[], variable: number, value: string): void {
  if (variable < 0) return;
  const prev = values[variable]!;
  values[variable] = prev === "" ? value : `${prev}/${value}`;
}

/**
 * Orders templates most specific first: more literal segments, then a custom verb, then no `**`,
 * then more segments. Stable for equal keys.
 */
export function compareSpecificity(a: PathTemplate, b: PathTemplate): number {
  return (
    b.literalCount - a.literalCount ||
    Number(b.verb !== undefined) - Number(a.verb !== undefined) ||
    Number(a.multiAt >= 0) - Number(b.multiAt >= 0) ||
    b.segments.length - a.segments.length
  );
}
