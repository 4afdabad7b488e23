import { type SqlBool, sql } from "kysely";
import type { Predicate } from "./predicates.js";

// Tag-name shapes the tag lists can leave out, written with functions both engines have (substr,
// length, rtrim) so that one expression serves SQLite and PostgreSQL alike.

const DIGITS = "0123456789";

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
