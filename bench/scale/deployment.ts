// One seeded deployment of `npm run bench:scale` on one engine: a new database (a SQLite file in a
// temp directory, or a new database on a PostgreSQL server), migrated, bulk-seeded, then opened as
// the real Store. `dispose` closes it and removes the database.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import pg from "pg";
import { connectDatabase } from "../../src/storage/sql/connect-database.js";
import { migrateToLatest } from "../../src/storage/sql/migrate.js";
import { type OpenStoreOptions, openStore } from "../../src/storage/sql/open-store.js";
import type { Store } from "../../src/storage/store.js";
import { type ScaleSizes, type SeedTimings, seedScale } from "./seed.js";

/** A seeded deployment: the store options, its size on disk, and how to remove it. */
export interface ScaleDeployment {
  engine: "sqlite" | "postgres";
  sizes: ScaleSizes;
  options: OpenStoreOptions;
  seedMs: SeedTimings;
  /** Bytes the database takes: pg_database_size, or the SQLite file after a WAL checkpoint. */
  bytes: number;
  /** A Store on the deployment with `extra` options (closed by `dispose`). */
  open(extra?: Partial<OpenStoreOptions>): Promise<Store>;
  dispose(): Promise<void>;
}

let databases = 0;

/**
 * Seeds `sizes` into a new database: SQLite when `postgresAdminUrl` is undefined, else a new
 * database on that server (`urlOf` gives its URL).
 */
export async function seedDeployment(
  sizes: ScaleSizes,
  postgres?: { adminUrl: string; urlOf: (name: string) => string },
): Promise<ScaleDeployment> {
  let options: OpenStoreOptions;
  let remove: () => Promise<void>;
  let sizeOf: () => Promise<number>;
  if (postgres === undefined) {
    const dir = mkdtempSync(join(tmpdir(), "wharf-bench-scale-"));
    const file = join(dir, "wharf.db");
    options = { sqlitePath: file };
    remove = async () => rmSync(dir, { recursive: true, force: true });
    sizeOf = async () => {
      const size = (path: string) => {
        try {
          return statSync(path).size;
        } catch {
          return 0;
        }
      };
      return size(file) + size(`${file}-wal`);
    };
  } else {
    const name = `wharf_bench_scale_${process.pid}_${++databases}`;
    const admin = new pg.Client({ connectionString: postgres.adminUrl });
    await admin.connect();
    await admin.query(`create database ${name}`);
    await admin.end();
    options = { databaseUrl: postgres.urlOf(name) };
    remove = async () => {
      const c = new pg.Client({ connectionString: postgres.adminUrl });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    };
    sizeOf = async () => {
      const c = new pg.Client({ connectionString: postgres.adminUrl });
      await c.connect();
      const { rows } = await c.query<{ size: string }>("select pg_database_size($1) as size", [name]);
      await c.end();
      return Number(rows[0]?.size ?? 0);
    };
  }
  const { db, dialect } = await connectDatabase(options);
  let seedMs: SeedTimings;
  try {
    await migrateToLatest(db, dialect.name);
    seedMs = await seedScale(db, dialect.name, sizes);
    if (dialect.name === "sqlite") await sql`pragma wal_checkpoint(truncate)`.execute(db);
  } finally {
    await db.destroy();
  }
  const bytes = await sizeOf();
  const stores: Store[] = [];
  return {
    engine: dialect.name,
    sizes,
    options,
    seedMs,
    bytes,
    async open(extra = {}) {
      const store = await openStore({ ...options, ...extra });
      stores.push(store);
      return store;
    },
    async dispose() {
      for (const store of stores.splice(0)) await store.close();
      await remove();
    },
  };
}
