import { execFile, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A PostgreSQL server the tests may create databases on. */
export interface PostgresServer {
  /** A URL of the server's maintenance database (`postgres`), for CREATE/DROP DATABASE. */
  readonly adminUrl: string;
  /** The URL of database `name` on this server. */
  urlOf(name: string): string;
}

/**
 * The `bin` directory of the newest PostgreSQL server installed under /usr/lib/postgresql (Debian
 * layout) that has `initdb`, or undefined when there is none.
 */
export function findPostgresBin(): string | undefined {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin");
}

/** The server at `url` (e.g. `WHARF_TEST_DATABASE_URL`); databases are created beside its own. */
export function existingPostgres(url: string): PostgresServer {
  return { adminUrl: url, urlOf: (name) => withDatabase(url, name) };
}

let shared: Promise<PostgresServer> | undefined;

/**
 * A throwaway cluster (initdb into a temp dir, `pg_ctl start` on a free loopback port, fsync off),
 * started once per process on first use and stopped (`-m immediate`, temp dir removed) when the
 * process exits. As root the server runs as the `postgres` user, as PostgreSQL requires.
 */
export function throwawayPostgres(bin: string): Promise<PostgresServer> {
  shared ??= startCluster(bin);
  return shared;
}

async function startCluster(bin: string): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), "wharf-pg-"));
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(dir, postgresUid(), -1);
  const command = (tool: string, args: string[]): [string, string[]] =>
    asRoot ? ["runuser", ["-u", "postgres", "--", join(bin, tool), ...args]] : [join(bin, tool), args];
  const data = join(dir, "db");

  const stop = () => {
    const [file, args] = command("pg_ctl", ["-D", data, "-m", "immediate", "stop"]);
    spawnSync(file, args, { stdio: "ignore" });
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", stop);
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.once(signal, () => {
      stop();
      process.exit(128 + (signal === "SIGINT" ? 2 : 15));
    });
  }

  await run(...command("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]));
  const port = await freePort();
  // Suites keep many stores (each a pool) open until they end: 100 connections (the default) ran out.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=400`;
  await run(...command("pg_ctl", ["-D", data, "-l", join(dir, "log"), "-o", options, "-w", "start"]));
  const base = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return { adminUrl: base, urlOf: (name) => withDatabase(base, name) };
}

function postgresUid(): number {
  const out = spawnSync("id", ["-u", "postgres"], { encoding: "utf8" });
  const uid = Number(out.stdout.trim());
  if (out.status !== 0 || !Number.isInteger(uid))
    throw new Error("no postgres user to run the test cluster as");
  return uid;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}
