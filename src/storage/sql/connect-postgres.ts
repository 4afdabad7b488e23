import { Kysely, PostgresDialect } from "kysely";
import pg from "pg";
import type { Database } from "./schema.js";

const INT8_OID = 20;

/** Per-pool type parsers: int8 (bigint columns, COUNT) as a JS bigint, leaving pg's global parsers alone. */
const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID && format !== "binary"
      ? (value: string) => BigInt(value)
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};

/** Opens a pg Pool on `url` (a `postgres://` or `postgresql://` URL) and returns a Kysely instance over it. */
export function connectPostgres(url: string): Kysely<Database> {
  const pool = new pg.Pool({ connectionString: url, types });
  // A client that loses its connection (the server restarts, the backend is terminated, the
  // database is dropped with force) emits "error". While idle in the pool it emits on the pool,
  // which drops it (the next query opens a new one). While checked out (a query in flight, a
  // transaction between statements) the pool has taken its listener off, and an "error" with no
  // listener is thrown as an uncaught exception: the process would crash. Each client keeps a
  // listener of its own: its queries reject with the error, and the pool discards it on release.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
