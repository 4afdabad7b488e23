import {
  compareSpecificity,
  matchPathTemplate,
  type PathTemplate,
  type SplitPath,
  splitPath,
} from "./path-template.js";

/** One route of a {@link RouteTable}: an HTTP method, a parsed template and what it leads to. */
export interface RouteEntry<T> {
  httpMethod: string;
  template: PathTemplate;
  value: T;
}

/** The answer of {@link RouteTable.match}. */
export type RouteMatch<T> =
  | { kind: "found"; value: T; template: PathTemplate; vars: string[] }
  | { kind: "method-not-allowed"; allowed: string[] }
  | { kind: "not-found" };

/** Routes request paths to values by `google.api.http` templates. */
export interface RouteTable<T> {
  /**
   * Finds the most specific route for `httpMethod` (upper case) and `path` (no query string).
   * `vars` holds the raw, still percent-encoded variable values in template order.
   * When only other methods match, answers `method-not-allowed` with those methods, sorted.
   */
  match(httpMethod: string, path: string): RouteMatch<T>;
}

const ANY_FIRST = "\u0000*";

/**
 * Builds the route table once: routes are indexed by method, then by their first literal segment,
 * each bucket sorted most specific first (see `compareSpecificity`), so a lookup tests only the few
 * templates that share the path's first segment.
 */
export function createRouteTable<T>(routes: readonly RouteEntry<T>[]): RouteTable<T> {
  const byMethod = new Map<string, Map<string, RouteEntry<T>[]>>();
  for (const route of routes) {
    let buckets = byMethod.get(route.httpMethod);
    if (!buckets) {
      buckets = new Map();
      byMethod.set(route.httpMethod, buckets);
    }
    const first = route.template.segments[0];
    const key = first?.kind === "literal" ? first.value : ANY_FIRST;
    let bucket = buckets.get(key);
    if (!bucket) {
      bucket = [];
      buckets.set(key, bucket);
    }
    bucket.push(route);
  }
  // Wildcard-first templates can match any first segment, so each bucket also gets them.
  for (const buckets of byMethod.values()) {
    const wild = buckets.get(ANY_FIRST) ?? [];
    for (const [key, bucket] of buckets) {
      if (key !== ANY_FIRST) bucket.push(...wild);
      bucket.sort((a, b) => compareSpecificity(a.template, b.template));
    }
  }

  const find = (buckets: Map<string, RouteEntry<T>[]> | undefined, split: SplitPath) => {
    if (!buckets) return undefined;
    const first = split.segments[0] ?? "";
    const hit = scan(buckets.get(first) ?? buckets.get(ANY_FIRST), split);
    // A one-segment path with a verb (`/x:verb`) is keyed by its verbless first segment.
    const firstVerbless = split.verbless[0] ?? "";
    return hit ?? (firstVerbless !== first ? scan(buckets.get(firstVerbless), split) : undefined);
  };

  const scan = (bucket: RouteEntry<T>[] | undefined, split: SplitPath) => {
    if (!bucket) return undefined;
    for (const route of bucket) {
      const vars = matchPathTemplate(route.template, split);
      if (vars) return { route, vars };
    }
    return undefined;
  };

  return {
    match(httpMethod, path) {
      const split = splitPath(path);
      const hit = find(byMethod.get(httpMethod), split);
      if (hit) return { kind: "found", value: hit.route.value, template: hit.route.template, vars: hit.vars };
      const allowed: string[] = [];
      for (const [method, buckets] of byMethod) {
        if (method !== httpMethod && find(buckets, split)) allowed.push(method);
      }
      return allowed.length > 0
        ? { kind: "method-not-allowed", allowed: allowed.sort() }
        : { kind: "not-found" };
    },
  };
}
