import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { type OpenStoreOptions, openStore } from "../../src/storage/sql/open-store.js";
import type { Store } from "../../src/storage/store.js";
import {
  existingPostgres,
  findPostgresBin,
  type PostgresServer,
  throwawayPostgres,
} from "./postgres-cluster.js";
import { admin } from "./shared-postgres.js";

/** The engines every store suite runs against. */
export type EngineName = "sqlite" | "postgres";

/** All engines, SQLite first. */
export const ENGINES: readonly EngineName[] = ["sqlite", "postgres"];

/**
 * One suite's database on one engine. Nothing is created until first used; everything it opened
 * (store handles, temp files, PostgreSQL databases) is released by `dispose`.
 */
export interface TestDatabase {
  readonly engine: EngineName;
  /** `openStore` options of this suite's database (created on first call), for code that opens its own store. */
  options(): Promise<OpenStoreOptions>;
  /**
   * `openStore` options of a new database of the same engine that holds no data (removed by
   * `dispose`). On PostgreSQL it is a copy of the run's migrated template when there is one, so
   * its schema may already be current; use `emptyOptions` where migrations must start from nothing.
   */
  freshOptions(): Promise<OpenStoreOptions>;
  /** `openStore` options of a new database with no schema at all, for migration tests (removed by `dispose`). */
  emptyOptions(): Promise<OpenStoreOptions>;
  /**
   * A new Store handle on `options` (default: this suite's database); migrations run on every
   * open. Closed by `dispose`.
   */
  open(options?: OpenStoreOptions): Promise<Store>;
  /** A Store on a new database of the same engine holding no data (see `freshOptions`); closed by `dispose`. */
  openFresh(): Promise<Store>;
  /** Closes every handle and removes every database this object created. */
  dispose(): Promise<void>;
}

/**
 * Why `engine` cannot run here, or undefined when it can. SQLite always runs. PostgreSQL runs
 * against `WHARF_TEST_DATABASE_URL` when set (the role must be allowed to CREATE DATABASE), else on
 * a throwaway cluster when PostgreSQL server binaries are installed. `WHARF_TEST_POSTGRES=skip`
 * skips it on purpose (reported as skipped, like a missing server).
 */
export function engineSkipReason(engine: EngineName): string | undefined {
  if (engine === "sqlite") return undefined;
  if (process.env.WHARF_TEST_POSTGRES === "skip") return "PostgreSQL disabled by WHARF_TEST_POSTGRES=skip";
  if (process.env.WHARF_TEST_DATABASE_URL || findPostgresBin()) return undefined;
  return "PostgreSQL unavailable: set WHARF_TEST_DATABASE_URL or install the PostgreSQL server (no /usr/lib/postgresql/*/bin/initdb)";
}

/** A TestDatabase on `engine`; call `dispose` when done. Fails on first use when the engine is unavailable. */
export function createTestDatabase(engine: EngineName): TestDatabase {
  return engine === "sqlite" ? sqliteDatabase() : postgresDatabase();
}

/**
 * Registers `body` once per engine of `engines` (default: all), each inside `describe("<title> [<engine>]")` with its own
 * TestDatabase, disposed after the suite (after the `after` hooks `body` registers). For an
 * unavailable engine the suite holds one SKIPPED test carrying the reason instead (never silently
 * passing). `body` runs at registration time: create stores inside hooks or tests, not in `body`
 * itself.
 *
 * @example
 * forEachEngine("repos", (db) => {
 *   it("inserts", async () => { const store = await db.open(); … });
 * });
 */
export function forEachEngine(
  title: string,
  body: (db: TestDatabase) => void,
  engines: readonly EngineName[] = ENGINES,
): void {
  for (const engine of engines) {
    const skip = engineSkipReason(engine);
    describe(`${title} [${engine}]`, () => {
      if (skip !== undefined) {
        // A skipped test (not a skipped suite) so the runner's "skipped" count shows it.
        it(`runs on ${engine}`, { skip }, () => {});
        return;
      }
      const db = createTestDatabase(engine);
      body(db);
      // Registered after the body's hooks, so it runs after them (node:test runs a suite's `after`
      // hooks in registration order): the suite's servers and stores close while their database
      // is still there, and only then is it dropped (with force, which would cut their connections).
      after(() => db.dispose());
    });
  }
}

/**
 * `forEachEngine` on SQLite alone, for a suite the storage engine cannot change: a protocol face,
 * validation, authorization. What the engine can change runs on both engines: the store and blob
 * conformance suites, the storage-level end-to-end files, and one PostgreSQL smoke file per domain.
 */
export function onOneEngine(title: string, body: (db: TestDatabase) => void): void {
  forEachEngine(title, body, ["sqlite"]);
}

/** Builds a TestDatabase from how to make the suite's and fresh databases' options, and how to clean up. */
function testDatabase(
  engine: EngineName,
  suiteOptions: () => Promise<OpenStoreOptions>,
  freshOptions: () => Promise<OpenStoreOptions>,
  emptyOptions: () => Promise<OpenStoreOptions>,
  cleanup: () => Promise<void>,
): TestDatabase {
  const stores: Store[] = [];
  const open = async (options?: OpenStoreOptions) => {
    const store = await openStore(options ?? (await suiteOptions()));
    stores.push(store);
    return store;
  };
  return {
    engine,
    options: suiteOptions,
    freshOptions,
    emptyOptions,
    open,
    openFresh: async () => open(await freshOptions()),
    dispose: async () => {
      await Promise.all(stores.splice(0).map((s) => s.close()));
      await cleanup();
    },
  };
}

function sqliteDatabase(): TestDatabase {
  let dir: string | undefined;
  let fresh = 0;
  const file = (name: string) => {
    dir ??= mkdtempSync(join(tmpdir(), "wharf-sqlite-"));
    return { sqlitePath: join(dir, name) };
  };
  return testDatabase(
    "sqlite",
    async () => file("wharf.db"),
    // A new file is empty until opened, whichever is asked for.
    async () => file(`fresh-${++fresh}.db`),
    async () => file(`fresh-${++fresh}.db`),
    async () => {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    },
  );
}

function postgresDatabase(): TestDatabase {
  let server: Promise<PostgresServer> | undefined;
  const created: string[] = [];
  const connectServer = () => {
    server ??= (async () => {
      const url = process.env.WHARF_TEST_DATABASE_URL;
      if (url) return existingPostgres(url);
      const bin = findPostgresBin();
      if (bin === undefined) throw new Error(engineSkipReason("postgres"));
      return throwawayPostgres(bin);
    })();
    return server;
  };
  /** A new database: a copy of the run's migrated template (when there is one) or an empty one. */
  const createDatabase = async (fromTemplate: boolean): Promise<OpenStoreOptions> => {
    const s = await connectServer();
    const name = `wharf_test_${randomBytes(6).toString("hex")}`;
    // scripts/run-tests.mjs makes a migrated template: copying it is faster than migrating anew.
    const template = fromTemplate ? process.env.WHARF_TEST_TEMPLATE_DATABASE : undefined;
    await admin(s, `create database ${name}${template ? ` template ${template}` : ""}`);
    created.push(name);
    return { databaseUrl: s.urlOf(name) };
  };
  let suiteDatabase: Promise<OpenStoreOptions> | undefined;
  return testDatabase(
    "postgres",
    () => {
      suiteDatabase ??= createDatabase(true);
      return suiteDatabase;
    },
    () => createDatabase(true),
    // Migration suites start from nothing.
    () => createDatabase(false),
    async () => {
      if (server === undefined) return;
      const s = await server;
      for (const name of created.splice(0)) await admin(s, `drop database if exists ${name} with (force)`);
    },
  );
}
