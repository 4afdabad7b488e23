import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, it } from "node:test";
import BetterSqlite3 from "better-sqlite3";
import pg from "pg";
import { MIGRATION_TABLE } from "../../src/storage/sql/migrate.js";
import { migrationsFor } from "../../src/storage/sql/migrations/migrations.js";
import { type EngineName, forEachEngine } from "../support/databases.js";
import { runWharf, serveProcess, stopProcess, type WharfProcess } from "../support/wharf-process.js";

// Replicas started at once on one database that has no schema yet (or, on PostgreSQL, does not
// exist yet): one creates and migrates it, every one starts. Real `wharf serve` processes.

const KNOWN = (engine: EngineName) => Object.keys(migrationsFor(engine)).sort();
const NEWEST = (engine: EngineName) => KNOWN(engine).at(-1) ?? "";

/** Where one scenario's servers keep their data, and the environment that points them at the database. */
interface Target {
  dataDir: string;
  env: Record<string, string>;
  /** The migration rows, or undefined when the database (or file) does not exist. */
  applied(): Promise<string[] | undefined>;
  /** Runs `statement` on the database. */
  run(statement: string): Promise<void>;
}

const dirs: string[] = [];
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function newDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "wharf-migration-race-"));
  dirs.push(dir);
  return dir;
}

async function withClient<T>(url: string, use: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

function sqliteTarget(): Target {
  const dataDir = newDataDir();
  const file = join(dataDir, "wharf.db");
  return {
    dataDir,
    env: {},
    applied: async () => {
      if (!existsSync(file)) return undefined;
      const db = new BetterSqlite3(file, { readonly: true });
      try {
        const table = db.prepare("select name from sqlite_master where name = ?").get(MIGRATION_TABLE);
        if (table === undefined) return [];
        return (
          db.prepare(`select name from ${MIGRATION_TABLE} order by name`).all() as { name: string }[]
        ).map((r) => r.name);
      } finally {
        db.close();
      }
    },
    run: async (statement) => {
      const db = new BetterSqlite3(file);
      try {
        db.exec(statement);
      } finally {
        db.close();
      }
    },
  };
}

/** A PostgreSQL target: the empty database `url`, or (`missing`) a database beside it that does not exist yet. */
function postgresTarget(url: string, missing: boolean): Target {
  const target = new URL(url);
  if (missing) {
    const name = `${target.pathname.slice(1)}_new`;
    target.pathname = `/${name}`;
    after(() => withClient(url, (c) => c.query(`drop database if exists ${name} with (force)`)));
  }
  const databaseUrl = target.toString();
  return {
    dataDir: newDataDir(),
    env: { WHARF_DATABASE_URL: databaseUrl },
    applied: async () => {
      const name = target.pathname.slice(1);
      const exists = await withClient(url, (c) =>
        c.query("select 1 from pg_database where datname = $1", [name]),
      );
      if (exists.rowCount === 0) return undefined;
      return withClient(databaseUrl, async (c) => {
        const table = await c.query("select to_regclass($1) as t", [MIGRATION_TABLE]);
        if (table.rows[0]?.t === null) return [];
        return (
          await c.query<{ name: string }>(`select name from ${MIGRATION_TABLE} order by name`)
        ).rows.map((r) => r.name);
      });
    },
    run: (statement) => withClient(databaseUrl, async (c) => void (await c.query(statement))),
  };
}

/** Starts three servers at once on `target`; each must answer /readyz with 200 on both ports. */
async function threeServersStart(target: Target): Promise<void> {
  const started = await Promise.allSettled([1, 2, 3].map(() => serveProcess(target.dataDir, target.env)));
  const servers = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  try {
    const failures = started.flatMap((s) => (s.status === "rejected" ? [String(s.reason)] : []));
    assert.deepEqual(failures, [], "every server started");
    for (const server of servers) {
      for (const base of [server.apiUrl, server.registryUrl]) {
        const res = await fetch(new URL("/readyz", base));
        assert.equal(res.status, 200, `${base}/readyz: ${await res.text()}`);
      }
    }
  } finally {
    await Promise.all(servers.map((s: WharfProcess) => stopProcess(s)));
  }
}

forEachEngine("migrations raced by replicas", (db) => {
  const emptyTarget = async () =>
    db.engine === "sqlite"
      ? sqliteTarget()
      : postgresTarget((await db.emptyOptions()).databaseUrl ?? "", false);

  it("three servers started at once on an empty database all start; each migration is applied once", async () => {
    const target = await emptyTarget();
    await threeServersStart(target);
    assert.deepEqual(await target.applied(), KNOWN(db.engine));
  });

  if (db.engine === "postgres") {
    it("three servers started at once on a database that does not exist yet create it once and all start", async () => {
      const target = postgresTarget((await db.emptyOptions()).databaseUrl ?? "", true);
      assert.equal(await target.applied(), undefined, "the database does not exist yet");
      await threeServersStart(target);
      assert.deepEqual(await target.applied(), KNOWN(db.engine));
    });
  }

  it("a server refuses a schema newer than it knows with one line, and changes nothing", async () => {
    const target = await emptyTarget();
    const migrated = await runWharf(["migrate", "--data-dir", target.dataDir], {
      ...process.env,
      ...target.env,
    });
    assert.equal(migrated.code, 0, migrated.stderr);
    await target.run(
      `insert into ${MIGRATION_TABLE} (name, timestamp) values ('0099-future', '2030-01-01T00:00:00.000Z')`,
    );
    const before = await target.applied();

    for (const args of [
      ["serve", "--api-addr", "127.0.0.1:0", "--registry-addr", "127.0.0.1:0"],
      ["migrate"],
      ["migrate", "--dry-run"],
    ]) {
      const run = await runWharf([...args, "--data-dir", target.dataDir], { ...process.env, ...target.env });
      assert.notEqual(run.code, 0, `${args[0]} exits non-zero`);
      assert.equal(
        run.stderr,
        `wharf: the database schema is newer than this wharf (applied: 0099-future; newest known: ${NEWEST(db.engine)}); upgrade wharf or point it at another database\n`,
        `wharf ${args.join(" ")}`,
      );
      assert.equal(run.stdout, "");
    }
    assert.deepEqual(await target.applied(), before, "nothing changed");
  });

  it("wharf migrate --dry-run lists the pending migrations and changes nothing; migrate applies them once", async () => {
    const target =
      db.engine === "sqlite"
        ? sqliteTarget()
        : postgresTarget((await db.emptyOptions()).databaseUrl ?? "", true);
    const env = { ...process.env, ...target.env };
    const dryRun = await runWharf(["migrate", "--dry-run", "--data-dir", target.dataDir], env);
    assert.equal(dryRun.code, 0, dryRun.stderr);
    assert.equal(
      dryRun.stdout,
      KNOWN(db.engine)
        .map((n) => `${n}\n`)
        .join(""),
    );
    assert.equal(await target.applied(), undefined, "no database (SQLite: no file) was created");

    const migrate = await runWharf(["migrate", "--data-dir", target.dataDir], env);
    assert.equal(migrate.code, 0, migrate.stderr);
    assert.equal(
      migrate.stdout,
      KNOWN(db.engine)
        .map((n) => `applied ${n}\n`)
        .join(""),
    );
    assert.deepEqual(await target.applied(), KNOWN(db.engine));

    // One migration pending again (as after an upgrade): dry-run names it and leaves it pending.
    const last = NEWEST(db.engine);
    await target.run(`delete from ${MIGRATION_TABLE} where name = '${last}'`);
    const pending = await runWharf(["migrate", "--dry-run", "--data-dir", target.dataDir], env);
    assert.equal(pending.stdout, `${last}\n`);
    assert.ok(!(await target.applied())?.includes(last), "still pending after --dry-run");
  });

  it("wharf migrate on a current database prints nothing to migrate, with and without --dry-run", async () => {
    const target = await emptyTarget();
    const env = { ...process.env, ...target.env };
    assert.equal((await runWharf(["migrate", "--data-dir", target.dataDir], env)).code, 0);
    for (const args of [["migrate"], ["migrate", "--dry-run"]]) {
      const run = await runWharf([...args, "--data-dir", target.dataDir], env);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, "nothing to migrate\n", `wharf ${args.join(" ")}`);
    }
  });
});
