import { type SqlBool, sql } from "kysely";
import type { Predicate } from "./predicates.js";

// Tag-name shapes the tag lists can leave out, written with functions both engines have (substr,
// length, rtrim) so that one expression serves SQLite and PostgreSQL alike.

const DIGITS = "0123456789";

/** The tag is a referrer tag: `sha256-` and 64 lowercase hex digits, then anything (`.sig`, `.att`). */
export function isReferrerTag(column = "name"): Predicate {
  const name = sql.ref(column);
  const hex = "0123456789abcdef";
  return sql<SqlBool>`(length(${name}) >= 71 and substr(${name}, 1, 7) = 'sha256-' and rtrim(substr(${name}, 8, 64), ${hex}) = '')`;
}

/** The tag ends in `-20yymmdd` (a date-stamped build such as `3.12-20250101`). */
export function endsWithDateStamp(column = "name"): Predicate {
  const name = sql.ref(column);
  return sql<SqlBool>`(length(${name}) >= 9 and substr(${name}, length(${name}) - 8, 3) = '-20' and rtrim(substr(${name}, length(${name}) - 5), ${DIGITS}) = '')`;
}

/** The tag ends in `-r` and one or more digits (an epoch build such as `1.2.3-r4`). */
export function endsWithEpoch(column = "name"): Predicate {
  const name = sql.ref(column);
  const stem = sql`rtrim(${name}, ${DIGITS})`;
  return sql<SqlBool>`(${stem} <> ${name} and length(${stem}) >= 2 and substr(${stem}, length(${stem}) - 1, 2) = '-r')`;
}
