import type { Kysely } from "kysely";
import type { DomainError } from "../../core/errors.js";
import { parentOf } from "../../core/uidp.js";
import type { SqlDialect } from "./dialect.js";
import type { Database } from "./schema.js";

/**
 * What every sub-store is built from: a Kysely handle (the pool, or one open transaction), the
 * engine's dialect, and a way to run several statements atomically.
 */
export interface SqlContext {
  readonly db: Kysely<Database>;
  readonly dialect: SqlDialect;
  /** True when `db` is an open transaction. */
  readonly inTransaction: boolean;
  /** Runs `fn` in a transaction; inside one already, joins it (no savepoint). */
  transaction<T>(fn: (ctx: SqlContext) => Promise<T>): Promise<T>;
}

/** A context on the whole database; `transaction` opens a Kysely transaction. */
export function rootContext(db: Kysely<Database>, dialect: SqlDialect): SqlContext {
  return {
    db,
    dialect,
    inTransaction: false,
    transaction: (fn) => db.transaction().execute((trx) => fn(transactionContext(trx, dialect))),
  };
}

function transactionContext(trx: Kysely<Database>, dialect: SqlDialect): SqlContext {
  const ctx: SqlContext = { db: trx, dialect, inTransaction: true, transaction: (fn) => fn(ctx) };
  return ctx;
}

/** Domain errors to raise for constraint violations of one write. */
export interface ViolationErrors {
  unique?: () => DomainError;
  foreignKey?: () => DomainError;
}

/**
 * Runs one write and turns the constraint violations named in `errors` into their DomainErrors;
 * anything else is rethrown unchanged. On PostgreSQL the violation also aborts the enclosing
 * transaction, so a caller inside `transaction` must let the error propagate.
 */
export async function guardWrite<T>(
  ctx: SqlContext,
  write: () => Promise<T>,
  errors: ViolationErrors,
): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (errors.unique && ctx.dialect.isUniqueViolation(err)) throw errors.unique();
    if (errors.foreignKey && ctx.dialect.isForeignKeyViolation(err)) throw errors.foreignKey();
    throw err;
  }
}

/**
 * The parent uid to store for `uid`, checking that a row's explicit parent field (a repo's
 * `groupUid`, a tag's `repoUid`) agrees with the uid; a mismatch is a caller bug.
 */
export function parentColumn(uid: string, claimedParent?: string): string {
  const parent = parentOf(uid);
  if (claimedParent !== undefined && claimedParent !== parent) {
    throw new Error(`store: "${claimedParent}" is not the parent of uid "${uid}"`);
  }
  return parent;
}
