import { type ChildProcess, execFile, spawn } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** The `wharf` executable of this checkout. */
export const WHARF = new URL("../../bin/wharf.js", import.meta.url).pathname;

/** A `wharf serve` child process. */
export interface WharfProcess {
  child: ChildProcess;
  apiUrl: string;
  registryUrl: string;
  /** Everything it printed so far. */
  output(): string;
}

/**
 * Starts `wharf serve` on free loopback ports with `dataDir` (plus `env`), and resolves once it
 * printed where it listens.
 */
export async function serveProcess(dataDir: string, env: Record<string, string> = {}): Promise<WharfProcess> {
  const child = spawn(
    process.execPath,
    [WHARF, "serve", "--api-addr", "127.0.0.1:0", "--registry-addr", "127.0.0.1:0"],
    {
      env: { ...process.env, ...env, WHARF_DATA_DIR: dataDir },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  // A test runner that dies without its after-hooks must not leave servers running.
  const reap = () => child.kill("SIGKILL");
  process.once("exit", reap);
  child.once("exit", () => process.removeListener("exit", reap));
  let stderr = "";
  let stdout = "";
  child.stdout?.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`wharf serve did not start: ${stderr}`)), 30_000);
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
      const api = /platform API on (\S+)/.exec(stderr)?.[1];
      const registry = /registry on (\S+)/.exec(stderr)?.[1];
      if (api && registry) {
        clearTimeout(timer);
        resolve({ child, apiUrl: api, registryUrl: registry, output: () => stdout + stderr });
      }
    });
    child.once("exit", (code) => reject(new Error(`wharf serve exited ${code}: ${stderr}`)));
  });
}

/** Stops the process with `signal` and waits for it to exit. */
export async function stopProcess(server: WharfProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  const exited = new Promise((r) => server.child.once("exit", r));
  server.child.kill(signal);
  await exited;
}

/** `wharf admin token` for the server at `apiUrl` using `dataDir` (valid 10 minutes). */
export async function adminTokenOf(dataDir: string, apiUrl: string): Promise<string> {
  const { stdout } = await run(process.execPath, [
    WHARF,
    "admin",
    "token",
    "--data-dir",
    dataDir,
    "--public-url",
    apiUrl,
    "--ttl",
    "10m",
  ]);
  return stdout.trim();
}
