import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import BetterSqlite3 from "better-sqlite3";
import {
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  Kysely,
  SelectQueryNode,
  SqliteDialect,
  type SqliteDialectConfig,
  SqliteDriver,
  type SqliteStatement,
} from "kysely";
import { setBounded } from "../../core/bounded-map.js";
import type { Database } from "./schema.js";
import { createSqliteWriteLockMemory, SqliteWriteLock } from "./sqlite-write-lock.js";

/** Prepared statements kept per connection; distinct SQL texts beyond this evict the oldest. */
const STATEMENT_CACHE_SIZE = 500;
/** How long a write waits for the file's write lock, held by another thread or process (ms). */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens the SQLite file at `path` (creating its directory; `:memory:` for a private in-memory
 * database) with WAL, synchronous=NORMAL, foreign keys, temporary storage in memory and a 5 s busy
 * timeout, integers read as bigint, and returns a Kysely instance over it. (With temporary storage
 * on disk, a write transaction whose statement may need undoing, such as a tag create's insert
 * into a table with several unique indexes, created, wrote and deleted a statement journal file:
 * measured at ~7% of a tag create's CPU.) Kysely serializes all queries on the one connection.
 * `walAutocheckpointPages` sets the WAL size at which a commit checkpoints (SQLite's default: 1000),
 * `walSizeLimitBytes` the size a larger WAL file is cut back to when it starts over (default: kept).
 * `writeLock`: the memory of the SqliteWriteLock that every thread of this process opening `path`
 * shares (default: a lock of this connection's own, which serializes nothing more than Kysely does).
 */
export function connectSqlite(
  path: string,
  options: {
    walAutocheckpointPages?: number;
    walSizeLimitBytes?: number;
    writeLock?: SharedArrayBuffer;
  } = {},
): Kysely<Database> {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new BetterSqlite3(path);
  try {
    sqlite.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("synchronous = NORMAL");
    sqlite.pragma("foreign_keys = ON");
    sqlite.pragma("temp_store = MEMORY");
    if (options.walAutocheckpointPages !== undefined) {
      sqlite.pragma(`wal_autocheckpoint = ${Math.trunc(options.walAutocheckpointPages)}`);
    }
    if (options.walSizeLimitBytes !== undefined) {
      sqlite.pragma(`journal_size_limit = ${Math.trunc(options.walSizeLimitBytes)}`);
    }
    sqlite.defaultSafeIntegers(true);
  } catch (err) {
    sqlite.close();
    throw err;
  }
  const writeLock = new SqliteWriteLock(options.writeLock ?? createSqliteWriteLockMemory());
  return new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: cachingDatabase(sqlite) }, writeLock),
  });
}

/**
 * better-sqlite3 prepares on every call; caching by SQL text saves that work on repeated queries.
 * Cached statements return rows as built by `objectRows`.
 */
function cachingDatabase(sqlite: BetterSqlite3.Database): SqliteDialectConfig["database"] {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => {
      cache.clear();
      sqlite.close();
    },
    prepare: (text: string) => {
      let stmt = cache.get(text);
      if (stmt === undefined) {
        stmt = objectRows(sqlite.prepare(text));
        setBounded(cache, text, stmt, STATEMENT_CACHE_SIZE);
      }
      return stmt;
    },
  };
}

/**
 * A statement whose rows are read as arrays and turned into objects here: better-sqlite3 builds
 * row objects through V8's C++ API, which costs more than the query itself for a 50-row list page.
 * Same result as its object mode: a key per result column in column order, and of two columns
 * with one name the later wins.
 */
function objectRows(stmt: BetterSqlite3.Statement): SqliteStatement {
  if (!stmt.reader) return stmt as unknown as SqliteStatement;
  stmt.raw(true);
  const names = stmt.columns().map((c) => c.name);
  const toObject = (values: unknown[]): Record<string, unknown> => {
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
    return row;
  };
  return {
    reader: true,
    all: (parameters) => (stmt.all(parameters) as unknown[][]).map(toObject),
    run: (parameters) => stmt.run(parameters),
    *iterate(parameters) {
      for (const values of stmt.iterate(parameters) as IterableIterator<unknown[]>) yield toObject(values);
    },
  };
}

/**
 * SQLite dialect whose transactions start with `BEGIN IMMEDIATE`: the write lock is taken up front,
 * so a second process waits on busy_timeout instead of failing with SQLITE_BUSY when a deferred
 * transaction tries to upgrade its read lock. Before that, transactions and writes outside one take
 * the process's SqliteWriteLock of the file, so threads of one process wait for each other without
 * blocking their event loops (see SqliteWriteLock).
 */
class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;
  readonly #writeLock: SqliteWriteLock;

  constructor(config: SqliteDialectConfig, writeLock: SqliteWriteLock) {
    super(config);
    this.#config = config;
    this.#writeLock = writeLock;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config, this.#writeLock);
  }
}

class ImmediateSqliteDriver extends SqliteDriver {
  readonly #writeLock: SqliteWriteLock;
  /** Kysely hands the one connection to one transaction or query at a time, so one flag suffices. */
  #inTransaction = false;
  /** The one connection, wrapped so that its writes outside a transaction take the lock. */
  #guarded: { inner: DatabaseConnection; outer: DatabaseConnection } | undefined;

  constructor(config: SqliteDialectConfig, writeLock: SqliteWriteLock) {
    super(config);
    this.#writeLock = writeLock;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const inner = await super.acquireConnection();
    if (this.#guarded?.inner !== inner) {
      this.#guarded = {
        inner,
        outer: {
          // Anything but a query builder's select may write (raw SQL included): it takes the lock.
          executeQuery: (query) =>
            this.#inTransaction || SelectQueryNode.is(query.query)
              ? inner.executeQuery(query)
              : this.#locked(() => inner.executeQuery(query)),
          streamQuery: (query, chunkSize) => inner.streamQuery(query, chunkSize),
        },
      };
    }
    return this.#guarded.outer;
  }

  async #locked<T>(run: () => Promise<T>): Promise<T> {
    await this.#writeLock.acquire(BUSY_TIMEOUT_MS);
    try {
      return await run();
    } finally {
      this.#writeLock.release();
    }
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await this.#writeLock.acquire(BUSY_TIMEOUT_MS);
    this.#inTransaction = true;
    try {
      await connection.executeQuery(CompiledQuery.raw("begin immediate"));
    } catch (err) {
      this.#endTransaction();
      throw err;
    }
  }

  // A failed commit leaves the transaction open; Kysely rolls it back next, which releases.
  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw("commit"));
    this.#endTransaction();
  }

  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await connection.executeQuery(CompiledQuery.raw("rollback"));
    } finally {
      this.#endTransaction();
    }
  }

  #endTransaction() {
    this.#inTransaction = false;
    this.#writeLock.release();
  }
}
