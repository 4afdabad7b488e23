import type { Kysely } from "kysely";
import type { Store } from "../store.js";
import { connectPostgres } from "./connect-postgres.js";
import { connectSqlite } from "./connect-sqlite.js";
import { postgresDialect, type SqlDialect, sqliteDialect } from "./dialect.js";
import { migrateToLatest } from "./migrate.js";
import type { Database } from "./schema.js";
import { rootContext } from "./sql-context.js";
import { createSqlStore } from "./sql-store.js";

/** Where the metadata lives. */
export interface OpenStoreOptions {
  /** A `postgres://` or `postgresql://` URL; when set, PostgreSQL is used and `sqlitePath` ignored. */
  databaseUrl?: string;
  /** The SQLite file used without `databaseUrl` (its directory is created); `:memory:` for a private in-memory database. */
  sqlitePath?: string;
}

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;

/**
 * Opens the metadata store and applies pending migrations before returning. PostgreSQL when
 * `databaseUrl` is a postgres URL (a pg Pool), else SQLite at `sqlitePath` (WAL, synchronous=NORMAL,
 * foreign keys on, busy_timeout 5000). Safe to call from several processes on one database:
 * migrations serialize. Throws when neither option is usable, for another URL scheme, or when
 * connecting or migrating fails (the connection is closed first). Call `close()` when done.
 */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const { db, dialect } = connect(options);
  try {
    await migrateToLatest(db, dialect.name);
  } catch (err) {
    await db.destroy();
    throw err;
  }
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= db.destroy();
    return closing;
  };
  return createSqlStore(rootContext(db, dialect), close);
}

function connect(options: OpenStoreOptions): { db: Kysely<Database>; dialect: SqlDialect } {
  const url = options.databaseUrl;
  if (url !== undefined && url !== "") {
    if (!POSTGRES_URL.test(url)) {
      throw new Error(
        `openStore: unsupported database URL scheme in "${url.split(":")[0]}:…" (want postgres://)`,
      );
    }
    return { db: connectPostgres(url), dialect: postgresDialect };
  }
  if (options.sqlitePath === undefined || options.sqlitePath === "") {
    throw new Error("openStore: set databaseUrl (postgres://…) or sqlitePath");
  }
  return { db: connectSqlite(options.sqlitePath), dialect: sqliteDialect };
}
