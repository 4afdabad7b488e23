import { type RawBuilder, type SqlBool, sql } from "kysely";
import type { AccessScopes } from "../../core/context.js";
import { invalidArgument } from "../../core/errors.js";
import type { Cursor, UidpFilter } from "../../core/list.js";
import { selfAndAncestors } from "../../core/uidp.js";
import type { CommonFilter } from "../common-filter.js";

/** A boolean SQL expression usable in `.where(...)`. */
export type Predicate = RawBuilder<SqlBool>;

/** Matches no row. */
export const NO_ROWS: Predicate = sql<SqlBool>`1 = 0`;

/**
 * How a list query refers to `uid` in its broad subtree ranges (`within`, `descendantsOf`).
 * Normally the plain column, so an index on uid serves the range. On SQLite, when ordering by
 * another column, `+uid`: the no-op unary plus hides the range from the planner (which has no
 * statistics to weigh it), so it walks the (order column, uid) index and filters instead of
 * collecting the whole subtree and sorting it (100,000 rows in scope: ~0.3 ms versus ~100 ms per
 * page; the price is a longer index walk when the scope is a small part of the table).
 * PostgreSQL's planner weighs both plans from its statistics, so it always gets the plain column.
 */
export type UidRef = RawBuilder<string>;

/** The plain `uid` column. */
export const UID: UidRef = sql<string>`uid`;

/**
 * `uid` is `root` or one of its descendants, as ONE index range: uids are lowercase hex and `/`, so
 * every descendant (`root/…`) sorts at or after `root` and before `root0` ('0' is the byte after
 * '/'), and no other uid falls in between. Same rows as `uid = X OR (uid > 'X/' AND uid < 'X0')`
 * without the OR, which both engines plan worse. Requires byte-order collation (SQLite BINARY,
 * PostgreSQL "C").
 */
export function selfOrDescendant(root: string, uid: UidRef = UID): Predicate {
  return sql<SqlBool>`(${uid} >= ${root} and ${uid} < ${`${root}0`})`;
}

/**
 * The exclusive bounds of every uid strictly below `root` (`root/` < uid < `root0`: '/' sorts
 * right before '0', see {@link selfOrDescendant}), for queries that bound a range scan themselves.
 */
export function descendantBounds(root: string): [string, string] {
  return [`${root}/`, `${root}0`];
}

/** `column` is one of `values`; an empty list matches nothing. */
export function isIn(values: readonly string[], column = "uid"): Predicate {
  if (values.length === 0) return NO_ROWS;
  return sql<SqlBool>`${sql.ref(column)} in (${sql.join(values)})`;
}

/**
 * Restricts rows to the authorized subtrees: nothing for absent or `{all: true}`, NO_ROWS for an
 * empty scope list, else an OR of subtree ranges.
 */
export function withinScopes(scopes: AccessScopes | undefined, uid: UidRef = UID): Predicate[] {
  if (scopes === undefined || scopes.all) return [];
  if (scopes.uids.length === 0) return [NO_ROWS];
  const ranges = scopes.uids.map((root) => selfOrDescendant(root, uid));
  return [ranges.length === 1 && ranges[0] ? ranges[0] : sql<SqlBool>`(${sql.join(ranges, sql` or `)})`];
}

/**
 * The predicates of a UidpFilter (to AND together). Proto3 defaults mean "unset": "" strings,
 * `inRoot: false` and an empty `ids` list add nothing. `ancestorsOf` a root uid matches nothing.
 */
export function uidpPredicates(filter: UidpFilter | undefined, uid: UidRef = UID): Predicate[] {
  if (filter === undefined) return [];
  const out: Predicate[] = [];
  if (filter.ancestorsOf) out.push(isIn(selfAndAncestors(filter.ancestorsOf).slice(0, -1)));
  if (filter.descendantsOf) out.push(selfOrDescendant(filter.descendantsOf, uid));
  if (filter.childrenOf) out.push(sql<SqlBool>`parent_uid = ${filter.childrenOf}`);
  if (filter.inRoot) out.push(sql<SqlBool>`parent_uid = ''`);
  if (filter.ids !== undefined && filter.ids.length > 0) out.push(isIn(filter.ids));
  return out;
}

/** `uidp` and `within` of a CommonFilter, as predicates to AND together. */
export function commonPredicates(filter: CommonFilter, uid: UidRef = UID): Predicate[] {
  return [...uidpPredicates(filter.uidp, uid), ...withinScopes(filter.within, uid)];
}

/** `column = value` when `value` is set (not undefined and not ""), else nothing. */
export function equalsIfSet(column: string, value: string | undefined): Predicate[] {
  return value === undefined || value === "" ? [] : [sql<SqlBool>`${sql.ref(column)} = ${value}`];
}

/** AND of `predicates`; undefined when there are none. */
export function allOf(predicates: readonly Predicate[]): Predicate | undefined {
  if (predicates.length === 0) return undefined;
  if (predicates.length === 1) return predicates[0];
  return sql<SqlBool>`(${sql.join(predicates, sql` and `)})`;
}

/** OR of two predicates. */
export function either(a: Predicate, b: Predicate): Predicate {
  return sql<SqlBool>`(${a} or ${b})`;
}

/**
 * Rows strictly after `after` in the order (column, uid), both ascending or both descending.
 * Written as `col >= v AND (col > v OR uid > u)` (mirrored for desc), equivalent to
 * `col > v OR (col = v AND uid > u)` but with a leading range an index on (col, uid) can seek to.
 * A cursor whose value type does not fit the column is INVALID_ARGUMENT on `page_token`.
 */
export function keysetAfter(column: string, numeric: boolean, after: Cursor, desc: boolean): Predicate {
  const strictly = sql.raw(desc ? "<" : ">");
  if (column === "uid") return sql<SqlBool>`uid ${strictly} ${after.uid}`;
  if (typeof after.value !== (numeric ? "number" : "string")) {
    throw invalidArgument("page_token", "page token does not match the order");
  }
  const orEqual = sql.raw(desc ? "<=" : ">=");
  const col = sql.ref(column);
  return sql<SqlBool>`(${col} ${orEqual} ${after.value} and (${col} ${strictly} ${after.value} or uid ${strictly} ${after.uid}))`;
}
