import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createServer } from "node:net";

/**
 * The `wharf` executable of this checkout, as shipped: it runs the build in dist/ (scripts/run-tests.mjs
 * compiles it first when src/ changed), not the sources under tsx.
 */
export const WHARF = new URL("../../bin/wharf.js", import.meta.url).pathname;

/** What one `wharf` command did: its exit code (-1 when it was killed) and what it printed. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `wharf args…` (the build in dist/) with exactly `env` as its environment, for at most 60 s. */
export function runWharf(args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(process.execPath, [WHARF, ...args], { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A `wharf` command running: what it printed so far, and what it did once it exits. */
export interface StartedCli {
  /** What it printed until now. */
  output(): { stdout: string; stderr: string };
  /** Resolves when it exited (after at most 60 s, as runWharf). */
  finished: Promise<CliRun>;
}

/** Starts `wharf args…` like {@link runWharf}, for a test that acts on what it prints while it runs. */
export function startWharf(args: string[], env: NodeJS.ProcessEnv): StartedCli {
  let stdout = "";
  let stderr = "";
  const child = spawn(process.execPath, [WHARF, ...args], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 60_000,
  });
  child.stdout.on("data", (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const finished = new Promise<CliRun>((resolve) =>
    child.once("close", (code) => resolve({ code: code ?? -1, stdout, stderr })),
  );
  return { output: () => ({ stdout, stderr }), finished };
}

/** A `wharf serve` child process. */
export interface WharfProcess {
  child: ChildProcess;
  apiUrl: string;
  registryUrl: string;
  /** Everything it printed so far. */
  output(): string;
  /** What it printed on stdout so far (its log lines). */
  stdout(): string;
}

/**
 * Starts `wharf serve` with `dataDir` (plus `env`), and resolves once it printed where it listens.
 * It listens on free loopback ports unless `addrs` names them (a restart that must keep its token
 * issuer and audiences, which are its URLs, passes the same addresses again). Rejects if it exits
 * first or has not started within `startTimeoutMs` (30 s).
 */
export async function serveProcess(
  dataDir: string,
  env: Record<string, string> = {},
  addrs: { apiAddr?: string; registryAddr?: string; startTimeoutMs?: number } = {},
): Promise<WharfProcess> {
  // Through its shebang, as an operator runs it: its Node flags apply (they once broke start-up).
  const child = spawn(
    WHARF,
    [
      "serve",
      "--api-addr",
      addrs.apiAddr ?? "127.0.0.1:0",
      "--registry-addr",
      addrs.registryAddr ?? "127.0.0.1:0",
    ],
    {
      // No drain delay on SIGTERM (no load balancer watches it): a test that stops a server does not
      // wait 5 s; the graceful-shutdown suite sets its own.
      env: { ...process.env, WHARF_SHUTDOWN_DELAY: "0", ...env, WHARF_DATA_DIR: dataDir },
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
    const timer = setTimeout(
      () =>
        reject(new Error(`wharf serve did not start within ${addrs.startTimeoutMs ?? 30_000} ms: ${stderr}`)),
      addrs.startTimeoutMs ?? 30_000,
    );
    child.stderr?.on("data", (c: Buffer) => {
      stderr += c.toString();
      // Whole lines only: a chunk may end inside a URL.
      const api = /platform API on (\S+)\n/.exec(stderr)?.[1];
      const registry = /registry on (\S+)\n/.exec(stderr)?.[1];
      if (api && registry) {
        clearTimeout(timer);
        resolve({
          child,
          apiUrl: api,
          registryUrl: registry,
          output: () => stdout + stderr,
          stdout: () => stdout,
        });
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

/**
 * `wharf admin token` for the server at `apiUrl` using `dataDir` (valid 10 minutes), for the API
 * unless `audience` names another (a URL, e.g. the registry's); `env` reaches the command (e.g.
 * `WHARF_DATABASE_URL` for a server on PostgreSQL). It runs in this process through runCli (the
 * parser bin/wharf.js runs; a spawned one cost ~0.9 s of CPU): the token is the tests' means, not
 * what they test. Rejects unless the command exits 0.
 */
export async function adminTokenOf(
  dataDir: string,
  apiUrl: string,
  options: { audience?: string; env?: Record<string, string> } = {},
): Promise<string> {
  // Loaded here: the CLI's modules are for the few suites that mint tokens this way.
  const { runCliInProcess } = await import("./cli-in-process.js");
  const args = [
    "admin",
    "token",
    "--data-dir",
    dataDir,
    "--public-url",
    apiUrl,
    "--ttl",
    "10m",
    ...(options.audience === undefined ? [] : ["--audience", options.audience]),
  ];
  const { code, stdout, stderr } = await runCliInProcess(args, { ...process.env, ...options.env });
  if (code !== 0) throw new Error(`wharf ${args.join(" ")} exited ${code}: ${stderr}`);
  return stdout.trim();
}

/** A free TCP port on 127.0.0.1 (free when asked; another process may take it before it is used). */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * POSTs `body` as JSON to `apiUrl` + `path` with `token`, asserts a 200 (the answer's body in the
 * message otherwise) and returns the created resource's uid.
 */
export async function createVia(apiUrl: string, token: string, path: string, body: unknown): Promise<string> {
  const res = await fetch(`${apiUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, `POST ${path}: ${await res.clone().text()}`);
  return ((await res.json()) as { uid: string }).uid;
}
