import pg from "pg";

/** Default of the connect time limit of {@link ensurePostgresDatabase}. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

/**
 * The database cannot be used and the operator has to act: it does not answer in time, or it does
 * not exist and the role may not create it. The message is one line saying what to do, with no
 * password in it.
 */
export class DatabaseSetupError extends Error {
  override readonly name = "DatabaseSetupError";
}

const INVALID_CATALOG_NAME = "3D000";
const INSUFFICIENT_PRIVILEGE = "42501";
const DUPLICATE_DATABASE = "42P04";
const UNIQUE_VIOLATION = "23505";

/**
 * Makes sure the PostgreSQL database `url` names exists and answers: connects once (within
 * `connectTimeoutMs`); when the database does not exist, creates it through the server's
 * maintenance database (`postgres`) as the same role, which needs CREATEDB. A concurrent creator
 * (another replica starting at the same moment) counts as success: PostgreSQL reports it either as
 * "already exists" or, when both inserted into pg_database at once, as a unique violation of
 * pg_database's name index; either way the database exists once the statement returns. Resolves to what it found or did. Rejects with {@link DatabaseSetupError}
 * on a timeout or when the role may not create the database; any other failure (refused, unknown
 * host, bad password) rejects with pg's or Node's own error.
 */
export async function ensurePostgresDatabase(
  url: string,
  options: { connectTimeoutMs?: number } = {},
): Promise<"existed" | "created"> {
  const timeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  try {
    await withClient(url, timeoutMs, async () => {});
    return "existed";
  } catch (err) {
    if ((err as { code?: unknown }).code !== INVALID_CATALOG_NAME) throw err;
  }
  const target = new pg.Client({ connectionString: url });
  const name = target.database ?? "";
  const role = target.user ?? "";
  const maintenance = new URL(url);
  maintenance.pathname = "/postgres";
  try {
    await withClient(maintenance.toString(), timeoutMs, (client) =>
      client.query(`create database ${client.escapeIdentifier(name)}`),
    );
    return "created";
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === DUPLICATE_DATABASE || concurrentlyCreated(err)) return "created";
    if (code === INSUFFICIENT_PRIVILEGE) {
      const where = `-h ${target.host} -p ${target.port}`;
      throw new DatabaseSetupError(
        `database "${name}" does not exist and role "${role}" may not create it: run createdb ${where} -O ${role} ${name} as a role that may (or grant ${role} CREATEDB)`,
      );
    }
    throw err;
  }
}

/** The unique violation of `create database` racing another `create database` of the same name. */
function concurrentlyCreated(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === UNIQUE_VIOLATION && e.constraint === "pg_database_datname_index";
}

async function withClient<T>(
  url: string,
  timeoutMs: number,
  use: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  // A connection lost later emits on the client; the awaited calls report it.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch (err) {
    if (err instanceof Error && /timeout/i.test(err.message) && !(err as { code?: unknown }).code) {
      throw new DatabaseSetupError(
        `the database at ${client.host}:${client.port} did not answer within ${timeoutMs / 1000} s (check --database-url and the network)`,
      );
    }
    throw err;
  }
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => {});
  }
}
