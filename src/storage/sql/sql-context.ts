import type { Compilable, CompiledQuery, Kysely } from "kysely";
import type { DomainError } from "../../core/errors.js";
import { traced } from "../../core/tracing.js";
import { parentOf } from "../../core/uidp.js";
import type { ChangeFeed, ChangeHub } from "../change-feed.js";
import { abortOnSignal } from "./abort-on-signal.js";
import type { CountCache, TableName } from "./count-cache.js";
import type { SqlDialect } from "./dialect.js";
import type { Database } from "./schema.js";

/**
 * What every sub-store is built from: a Kysely handle (the pool, or one open transaction), the
 * engine's dialect, the list-total cache, and a way to run several statements atomically.
 */
export interface SqlContext {
  readonly db: Kysely<Database>;
  readonly dialect: SqlDialect;
  /** True when `db` is an open transaction (whose reads must not use or fill the count cache). */
  readonly inTransaction: boolean;
  readonly counts: CountCache;
  /** Every committed change to the database (see ChangeFeed). */
  readonly changes: ChangeFeed;
  /**
   * Records a write to `tables` (call after the write): their cached list totals stop being served,
   * and the change is published on the change feed, here and (PostgreSQL) to the other processes:
   * outside a transaction at once, inside one at its commit.
   */
  changed(...tables: TableName[]): void;
  /**
   * Runs `fn` in a transaction; inside one already, joins it (no savepoint). `signal`: once it
   * fired, the transaction rolls back with its reason (checked before BEGIN, after it, after each
   * statement and before COMMIT). With tracing on, an outermost transaction is a `db.transaction`
   * span (ADR 0042).
   */
  transaction<T>(fn: (ctx: SqlContext) => Promise<T>, signal?: AbortSignal): Promise<T>;
  /**
   * Inside a transaction: runs `hook` in it after the outermost `transaction` callback resolved and
   * right before the commit, in registration order (a throw rolls back like one from the
   * callback). Outside a transaction there is nothing to run it before: throws.
   */
  beforeCommit(hook: () => Promise<void>): void;
}

/** Where a context sends the changes it records. */
export interface ChangeSink {
  /** This process's feed: every committed batch is published to it. */
  readonly hub: ChangeHub;
  /** Tells the other processes, inside the transaction on `db` right before its COMMIT. */
  beforeCommit?(db: Kysely<Database>, tables: readonly TableName[]): Promise<void>;
  /** Tells the other processes about a write already committed (outside a transaction). */
  afterWrite?(tables: readonly TableName[]): void;
}

/** A context on the whole database; `transaction` opens a Kysely transaction. */
export function rootContext(
  db: Kysely<Database>,
  dialect: SqlDialect,
  counts: CountCache,
  sink: ChangeSink,
): SqlContext {
  return {
    db,
    dialect,
    inTransaction: false,
    counts,
    changes: sink.hub,
    changed: (...tables) => {
      counts.invalidate(tables);
      sink.afterWrite?.(tables);
      sink.hub.publish({ tables, everything: false });
    },
    beforeCommit() {
      throw new Error("beforeCommit outside a transaction");
    },
    transaction: (fn, signal) =>
      traced("db.transaction", { "db.system.name": dialect.name }, () => runTransaction(fn, signal)),
  };

  async function runTransaction<T>(fn: (ctx: SqlContext) => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    const written = new Set<TableName>();
    let committed = false;
    try {
      const result = await db.transaction().execute(async (trx) => {
        // BEGIN may have waited long for the write lock (SQLite) or a connection (PostgreSQL).
        signal?.throwIfAborted();
        const handle = signal ? trx.withPlugin(abortOnSignal(signal)) : trx;
        const hooks: Array<() => Promise<void>> = [];
        const result = await fn(transactionContext(handle, dialect, counts, sink.hub, written, hooks));
        // A hook may register more hooks: run until none is left.
        for (let i = 0; i < hooks.length; i++) await hooks[i]?.();
        signal?.throwIfAborted();
        if (written.size > 0) await sink.beforeCommit?.(handle, [...written]);
        return result;
      });
      committed = true;
      return result;
    } finally {
      // Others may have counted the pre-commit rows after our writes bumped the generation.
      counts.invalidate([...written]);
      if (committed && written.size > 0) sink.hub.publish({ tables: [...written], everything: false });
    }
  }
}

function transactionContext(
  trx: Kysely<Database>,
  dialect: SqlDialect,
  counts: CountCache,
  changes: ChangeFeed,
  written: Set<TableName>,
  hooks: Array<() => Promise<void>>,
): SqlContext {
  const ctx: SqlContext = {
    db: trx,
    dialect,
    inTransaction: true,
    counts,
    changes,
    changed: (...tables) => {
      counts.invalidate(tables);
      for (const t of tables) written.add(t);
    },
    transaction: (fn) => fn(ctx),
    beforeCommit: (hook) => {
      hooks.push(hook);
    },
  };
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

/**
 * A query compiled once per engine and then run with new parameter values. Kysely builds and
 * compiles a query on every call (~8 µs), most of the cost of a primary-key lookup. `build` must
 * bind exactly the parameters later passed to the returned function, in the same order (its own
 * values are placeholders).
 */
export function precompiled<Row>(
  build: (db: Kysely<Database>) => Compilable<Row>,
): (ctx: SqlContext, parameters: readonly unknown[]) => Promise<Row[]> {
  const run = precompiledBySize((db) => build(db));
  return (ctx, parameters) => run(ctx, 0, parameters);
}

/**
 * `precompiled` for a query whose shape depends on a count, such as the rows of a multi-row insert
 * or the values of an IN list: compiled once per engine and size up to `maxCachedSize`, and on
 * every call beyond it. `build(db, size)` must bind exactly the parameters later passed with that
 * size, in the same order.
 */
export function precompiledBySize<Row>(
  build: (db: Kysely<Database>, size: number) => Compilable<Row>,
  maxCachedSize = 32,
): (ctx: SqlContext, size: number, parameters: readonly unknown[]) => Promise<Row[]> {
  const cache = new Map<string, CompiledQuery<Row>>();
  return async (ctx, size, parameters) => {
    const key = `${ctx.dialect.name}:${size}`;
    let compiled = cache.get(key);
    if (compiled === undefined) {
      compiled = build(ctx.db, size).compile();
      if (compiled.parameters.length !== parameters.length) {
        throw new Error(
          `precompiled: query binds ${compiled.parameters.length} parameters, not ${parameters.length}`,
        );
      }
      if (size <= maxCachedSize) cache.set(key, compiled);
    }
    return (await ctx.db.executeQuery<Row>({ ...compiled, parameters })).rows;
  };
}
