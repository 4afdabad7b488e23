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
  // An idle client that loses its connection emits on the pool; without a listener that would crash
  // the process. The pool drops the client and the next query opens a new one.
  pool.on("error", () => {});
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
