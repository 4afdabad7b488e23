import { type RawBuilder, type SqlBool, sql } from "kysely";
import type { AccessScopes } from "../../core/context.js";
import { invalidArgument } from "../../core/errors.js";
import type { Cursor } from "../../core/list.js";
import { selfAndAncestors } from "../../core/uidp.js";
import type { CommonFilter, UidpFilter } from "../store.js";

/** A boolean SQL expression usable in `.where(...)`. */
export type Predicate = RawBuilder<SqlBool>;

/** Matches no row. */
export const NO_ROWS: Predicate = sql<SqlBool>`1 = 0`;

/**
 * `column` is `uid` or one of its descendants, as a range so an index on `column` serves it:
 * descendants start with `uid/`, and every such string sorts after `uid/` and before `uid0`
 * ('0' is the byte after '/'). Requires byte-order collation (SQLite BINARY, PostgreSQL "C").
 */
export function selfOrDescendant(uid: string, column = "uid"): Predicate {
  const col = sql.ref(column);
  return sql<SqlBool>`(${col} = ${uid} or (${col} > ${`${uid}/`} and ${col} < ${`${uid}0`}))`;
}

/** `column` is one of `values`; an empty list matches nothing. */
export function isIn(values: readonly string[], column = "uid"): Predicate {
  if (values.length === 0) return NO_ROWS;
  return sql<SqlBool>`${sql.ref(column)} in (${sql.join(values)})`;
}

/**
 * Restricts rows to the authorized subtrees: undefined (no predicate) for absent or `{all: true}`,
 * nothing for an empty scope list, else an OR of subtree ranges.
 */
export function withinScopes(scopes: AccessScopes | undefined, column = "uid"): Predicate | undefined {
  if (scopes === undefined || scopes.all) return undefined;
  if (scopes.uids.length === 0) return NO_ROWS;
  const ranges = scopes.uids.map((uid) => selfOrDescendant(uid, column));
  return ranges.length === 1 ? ranges[0] : sql<SqlBool>`(${sql.join(ranges, sql` or `)})`;
}

/**
 * The predicates of a UidpFilter (to AND together). Proto3 defaults mean "unset": "" strings,
 * `inRoot: false` and an empty `ids` list add nothing. `ancestorsOf` a root uid matches nothing.
 */
export function uidpPredicates(filter: UidpFilter | undefined): Predicate[] {
  if (filter === undefined) return [];
  const out: Predicate[] = [];
  if (filter.ancestorsOf) out.push(isIn(selfAndAncestors(filter.ancestorsOf).slice(0, -1)));
  if (filter.descendantsOf) out.push(selfOrDescendant(filter.descendantsOf));
  if (filter.childrenOf) out.push(sql<SqlBool>`parent_uid = ${filter.childrenOf}`);
  if (filter.inRoot) out.push(sql<SqlBool>`parent_uid = ''`);
  if (filter.ids !== undefined && filter.ids.length > 0) out.push(isIn(filter.ids));
  return out;
}

/** `uidp` and `within` of a CommonFilter, as predicates to AND together. */
export function commonPredicates(filter: CommonFilter): Predicate[] {
  const out = uidpPredicates(filter.uidp);
  const within = withinScopes(filter.within);
  if (within !== undefined) out.push(within);
  return out;
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
