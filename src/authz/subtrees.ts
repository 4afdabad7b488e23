import { isAncestorOrSelf } from "../core/uidp.js";

/**
 * Sets of subtrees, each named by its root uid (the root and all its descendants). A set is kept
 * minimal: no member is a descendant of another, members sorted ascending.
 */

/** The minimal form of `roots`: duplicates and members already covered by an ancestor removed. */
export function minimalRoots(roots: Iterable<string>): string[] {
  // Sorted ascending, an ancestor always comes before its descendants ("a" < "a/…").
  const sorted = [...new Set(roots)].sort();
  const kept: string[] = [];
  for (const uid of sorted) {
    if (!kept.some((root) => isAncestorOrSelf(root, uid))) kept.push(uid);
  }
  return kept;
}

/**
 * The subtrees covered by both `a` and `b`. Two subtrees overlap only when one root is an
 * ancestor-or-self of the other, and then their intersection is the deeper one.
 */
export function intersectRoots(a: readonly string[], b: readonly string[]): string[] {
  const out: string[] = [];
  for (const x of a) {
    for (const y of b) {
      if (isAncestorOrSelf(x, y)) out.push(y);
      else if (isAncestorOrSelf(y, x)) out.push(x);
    }
  }
  return minimalRoots(out);
}

/** True when `uid` lies in one of the subtrees rooted at `roots`. */
export function coveredBy(roots: readonly string[], uid: string): boolean {
  return roots.some((root) => isAncestorOrSelf(root, uid));
}
