import { type RawBuilder, sql } from "kysely";

/** The two engines the SQL store runs on. */
export type DialectName = "sqlite" | "postgres";

/**
 * What differs between the engines at run time: how a boolean is bound, how constraint violations
 * are reported, row locks, and one planner hint. Everything else is written once. (Column types
 * differ too, but those live in each migration, frozen with it.)
 */
export interface SqlDialect {
  readonly name: DialectName;
  /** The value to bind for a boolean column (SQLite has no boolean type: 0/1). */
  bool(value: boolean): boolean | number;
  /** True when `err` is a unique or primary-key violation. */
  isUniqueViolation(err: unknown): boolean;
  /** True when `err` is a foreign-key violation. */
  isForeignKeyViolation(err: unknown): boolean;
  /** True when `SELECT … FOR UPDATE` exists (PostgreSQL); SQLite transactions lock the whole database. */
  readonly rowLocks: boolean;
  /**
   * How a list ordered by a column other than uid refers to uid in its subtree ranges: SQLite hides
   * them from its planner with `+uid` (see `UidRef` in predicates.ts); PostgreSQL uses the column.
   */
  readonly uidInOrderedScan: RawBuilder<string>;
}

function errorCode(err: unknown): unknown {
  return typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
}

/** SQLite via better-sqlite3 (`SqliteError.code` carries the extended result code). */
export const sqliteDialect: SqlDialect = {
  name: "sqlite",
  bool: (value) => (value ? 1 : 0),
  isUniqueViolation: (err) => {
    const code = errorCode(err);
    return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY";
  },
  isForeignKeyViolation: (err) => errorCode(err) === "SQLITE_CONSTRAINT_FOREIGNKEY",
  rowLocks: false,
  uidInOrderedScan: sql<string>`+uid`,
};

/** PostgreSQL via pg (SQLSTATE in `DatabaseError.code`). */
export const postgresDialect: SqlDialect = {
  name: "postgres",
  bool: (value) => value,
  isUniqueViolation: (err) => errorCode(err) === "23505",
  isForeignKeyViolation: (err) => errorCode(err) === "23503",
  rowLocks: true,
  uidInOrderedScan: sql<string>`uid`,
};

/** Reads a boolean column: pg gives booleans, SQLite 0n/1n. */
export function readBool(value: boolean | bigint | number): boolean {
  return value === true || value === 1n || value === 1;
}

/** Reads a bigint column as a number (ms times and counts stay far below 2^53). */
export function readInt(value: bigint | number): number {
  return Number(value);
}

/** Reads a nullable bigint column; NULL becomes undefined. */
export function readOptionalInt(value: bigint | number | null): number | undefined {
  return value === null ? undefined : Number(value);
}
