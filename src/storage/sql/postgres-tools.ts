import { spawn } from "node:child_process";
import { constants } from "node:fs";
import { access, readdir } from "node:fs/promises";
import { delimiter, join } from "node:path";

/** The folder of each installed PostgreSQL version's programs (Debian and Ubuntu packages). */
const VERSIONED_BIN_ROOT = "/usr/lib/postgresql";

/**
 * A PostgreSQL client program (`pg_dump`, `pg_restore`) is not installed where Wharf looks. The
 * message names the program, where Wharf looked and how to install it; the CLI prints it and exits 1.
 */
export class PostgresToolMissingError extends Error {
  override readonly name = "PostgresToolMissingError";
}

/**
 * The path of PostgreSQL's client program `name`: in `WHARF_PG_BINDIR` alone when `env` sets it,
 * else the first executable on `env.PATH`, else the newest `/usr/lib/postgresql/<version>/bin`.
 * Rejects with {@link PostgresToolMissingError} naming `name` when none is found.
 */
export async function findPostgresTool(
  name: "pg_dump" | "pg_restore",
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const dirs = env.WHARF_PG_BINDIR
    ? [env.WHARF_PG_BINDIR]
    : [...(env.PATH ?? "").split(delimiter).filter((d) => d !== ""), ...(await versionedBinDirs())];
  for (const dir of dirs) {
    const path = join(dir, name);
    if (
      await access(path, constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return path;
  }
  const where = env.WHARF_PG_BINDIR
    ? `WHARF_PG_BINDIR (${env.WHARF_PG_BINDIR})`
    : `PATH or ${VERSIONED_BIN_ROOT}/*/bin`;
  throw new PostgresToolMissingError(
    `${name} is not installed (looked in ${where}): a PostgreSQL backup and restore run PostgreSQL's own ${name}; install the PostgreSQL client programs of the server's version or newer (e.g. apt install postgresql-client), or point WHARF_PG_BINDIR at their folder`,
  );
}

/** `/usr/lib/postgresql/<version>/bin`, newest version first. */
async function versionedBinDirs(): Promise<string[]> {
  const versions = await readdir(VERSIONED_BIN_ROOT).catch(() => [] as string[]);
  return versions
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(VERSIONED_BIN_ROOT, v, "bin"));
}

/**
 * How a PostgreSQL program reaches the database of `url` without the password on its command line
 * (where `ps` shows it): the URL without its password, and the environment with `PGPASSWORD` set
 * to it (when it had one).
 */
export function libpqTarget(url: string, env: NodeJS.ProcessEnv): { dbname: string; env: NodeJS.ProcessEnv } {
  const parsed = new URL(url);
  const password = decodeURIComponent(parsed.password);
  parsed.password = "";
  return {
    dbname: parsed.toString(),
    env: { ...env, ...(password !== "" ? { PGPASSWORD: password } : {}) },
  };
}

/**
 * Runs `program args…` with `env`; resolves once it exited 0, else rejects with an Error naming the
 * program, its exit code and the last lines of its stderr (which libpq never fills with passwords).
 */
export function runPostgresTool(program: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env, stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr = (stderr + c.toString()).slice(-4000);
    });
    child.once("error", reject);
    child.once("close", (code, signal) => {
      if (code === 0) resolve();
      else {
        const name = program.split("/").at(-1);
        reject(
          new Error(
            `${name} failed (${signal ?? `exit ${code}`}): ${stderr.trim().split("\n").slice(-5).join(" | ")}`,
          ),
        );
      }
    });
  });
}
