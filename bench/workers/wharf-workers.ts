// `wharf serve --workers N` for the workers dimension of `bench:api` and `bench:registry`: the real
// command an operator runs (bin/wharf.js through its shebang), on PostgreSQL (SQLite refuses more
// than one worker), with its request log written to a file as `wharf serve` writes it to stdout.
import { type ChildProcess, spawn } from "node:child_process";
import { openSync } from "node:fs";
import { adminTokenOf, WHARF } from "../../test/support/wharf-process.js";
import { stop, treeCpuSecondsOf } from "../registry/processes.js";

/** A running `wharf serve --workers N`, with admin tokens for both audiences. */
export interface WharfWorkers {
  workers: number;
  /** The primary's process id; the workers are its children. */
  pid: number;
  apiUrl: string;
  registryUrl: string;
  apiToken: string;
  registryToken: string;
  /** CPU seconds used so far by the primary and every worker. */
  cpuSeconds(): number;
  /** SIGTERM, then waits for the primary (which drains and stops every worker) to exit. */
  stop(): Promise<void>;
}

/**
 * Starts `wharf serve --workers <workers>` on free loopback ports with `dataDir` and `databaseUrl`
 * (plus `env`), request log appended to `logFile`; resolves once the primary says every worker
 * serves and both tokens are minted. Rejects if it exits first or is not up within 60 s.
 */
export async function startWharfWorkers(opts: {
  workers: number;
  dataDir: string;
  databaseUrl: string;
  logFile: string;
  env?: Record<string, string>;
}): Promise<WharfWorkers> {
  const env = { WHARF_DATABASE_URL: opts.databaseUrl, ...opts.env };
  const child = spawn(
    WHARF,
    [
      "serve",
      "--workers",
      String(opts.workers),
      "--api-addr",
      "127.0.0.1:0",
      "--registry-addr",
      "127.0.0.1:0",
    ],
    {
      env: { ...process.env, WHARF_SHUTDOWN_DELAY: "0", ...env, WHARF_DATA_DIR: opts.dataDir },
      stdio: ["ignore", openSync(opts.logFile, "a"), "pipe"],
    },
  );
  const reap = () => child.kill("SIGKILL");
  process.once("exit", reap);
  child.once("exit", () => process.removeListener("exit", reap));
  const urls = await announced(child, opts.workers);
  const mint = (audience: string) => adminTokenOf(opts.dataDir, urls.apiUrl, { audience, env });
  return {
    workers: opts.workers,
    pid: child.pid ?? 0,
    ...urls,
    apiToken: await mint(urls.apiUrl),
    registryToken: await mint(urls.registryUrl),
    cpuSeconds: () => treeCpuSecondsOf(child.pid ?? 0),
    stop: () => stop(child, 30_000),
  };
}

/** The URLs `wharf serve` prints on stderr once it (with N > 1, every worker) listens. */
function announced(child: ChildProcess, workers: number): Promise<{ apiUrl: string; registryUrl: string }> {
  let stderr = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wharf serve did not start: ${stderr}`)), 60_000);
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
      const apiUrl = /platform API on (\S+)/.exec(stderr)?.[1];
      const registryUrl = /registry on (\S+)/.exec(stderr)?.[1];
      if (apiUrl && registryUrl && (workers === 1 || stderr.includes(`${workers} workers\n`))) {
        clearTimeout(timer);
        resolve({ apiUrl, registryUrl });
      }
    });
    child.once("exit", (code) => reject(new Error(`wharf serve exited ${code}: ${stderr}`)));
  });
}
