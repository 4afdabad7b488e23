import { randomBytes } from "node:crypto";
import pg from "pg";
import { openStore } from "../../src/storage/sql/open-store.js";
import {
  existingPostgres,
  findPostgresBin,
  type PostgresServer,
  throwawayPostgres,
} from "./postgres-cluster.js";

/** What test processes need to share one PostgreSQL server: the variables to set in their environment. */
export interface SharedPostgres {
  /** `WHARF_TEST_DATABASE_URL` (the server's maintenance database) and `WHARF_TEST_TEMPLATE_DATABASE`. */
  readonly env: Record<string, string>;
  /** Drops the template (on a server we did not start; a throwaway cluster goes away with the process). */
  dispose(): Promise<void>;
}

/**
 * Starts the one PostgreSQL server of a test run, for scripts/run-tests.mjs: the server at
 * `WHARF_TEST_DATABASE_URL` when set, else a throwaway cluster (stopped when this process exits).
 * It creates a template database with every migration applied, so each suite's database is a copy
 * (`create database … template …`) instead of a fresh migration. Only the schema is in the
 * template: a store's identity and keys are made when a store first opens its own copy.
 * Resolves undefined when PostgreSQL is disabled (`WHARF_TEST_POSTGRES=skip`) or not installed;
 * the suites then report PostgreSQL as skipped, as before.
 */
export async function startSharedPostgres(): Promise<SharedPostgres | undefined> {
  if (process.env.WHARF_TEST_POSTGRES === "skip") return undefined;
  const url = process.env.WHARF_TEST_DATABASE_URL;
  const bin = findPostgresBin();
  if (!url && bin === undefined) return undefined;
  const server: PostgresServer = url ? existingPostgres(url) : await throwawayPostgres(bin as string);
  const template = `wharf_template_${randomBytes(6).toString("hex")}`;
  await admin(server, `create database ${template}`);
  const store = await openStore({ databaseUrl: server.urlOf(template) });
  await store.close();
  return {
    env: { WHARF_TEST_DATABASE_URL: server.adminUrl, WHARF_TEST_TEMPLATE_DATABASE: template },
    dispose: async () => {
      if (url) await admin(server, `drop database if exists ${template} with (force)`);
    },
  };
}

/** Runs one statement on `server`'s maintenance database (CREATE/DROP DATABASE). */
export async function admin(server: PostgresServer, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: server.adminUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
