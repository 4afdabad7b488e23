/**
 * Runs the real `skopeo` client against a registry hosted by the test process itself.
 *
 * skopeo comes from Debian (`apt-get install skopeo`; `.ci/run` installs it when it can). Tests that
 * need it skip when it is absent:
 *
 * ```ts
 * import { skopeoSkip, runSkopeo } from "../support/skopeo.js";
 * test("push with skopeo", { skip: skopeoSkip }, async () => {
 *   const r = await runSkopeo(["copy", "--dest-tls-verify=false", `oci:${dir}:v1`, `docker://${host}/acme/app:v1`]);
 *   assert.equal(r.code, 0, r.stderr);
 * });
 * ```
 *
 * `skopeoSkip` is `false` when skopeo is installed and `"skopeo not installed: apt-get install skopeo"`
 * otherwise, which is what node:test's `skip` option takes.
 *
 * Plain-HTTP registries (the test server listens on http://127.0.0.1:<port>) need
 * `--dest-tls-verify=false` for pushes, `--src-tls-verify=false` for pulls and `--tls-verify=false` for
 * `inspect`, `list-tags` and `delete`. Credentials go in `--creds user:secret` (`--src-creds`/
 * `--dest-creds` for copy); skopeo follows a `Bearer` challenge to the token endpoint by itself.
 */
import { spawn } from "node:child_process";
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** The result of one skopeo run; a non-zero `code` is returned, not thrown. */
export interface SkopeoResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Options of {@link runSkopeo}. */
export interface SkopeoOptions {
  /** Kill skopeo (SIGKILL) and reject after this many milliseconds; default 60 000. */
  timeoutMs?: number;
  /** Extra environment variables, applied over the isolated environment described at {@link runSkopeo}. */
  env?: Record<string, string>;
  /** Working directory (relative `oci:`/`dir:` paths resolve against it); default the process's. */
  cwd?: string;
}

/** Whether an executable called `name` is on PATH (checked without spawning anything). */
export function commandAvailable(name: string): boolean {
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir === "") continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}

let available: boolean | undefined;

/** Whether `skopeo` is on PATH (cached after the first call). */
export function skopeoAvailable(): boolean {
  available ??= commandAvailable("skopeo");
  return available;
}

/** node:test `skip` value: `false` when skopeo is installed, otherwise the reason to print. */
export const skopeoSkip: false | string = skopeoAvailable()
  ? false
  : "skopeo not installed: apt-get install skopeo";

let sandbox: string | undefined;

/** A per-process directory holding an empty auth file and empty config homes; removed at exit. */
function isolatedHome(): string {
  if (sandbox !== undefined) return sandbox;
  const dir = mkdtempSync(join(tmpdir(), "wharf-skopeo-"));
  for (const sub of ["run", "config", "docker"]) mkdirSync(join(dir, sub), { mode: 0o700 });
  writeFileSync(join(dir, "auth.json"), "{}\n", { mode: 0o600 });
  writeFileSync(join(dir, "registries.conf"), "");
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  sandbox = dir;
  return dir;
}

/**
 * Runs `skopeo --insecure-policy <args…>` asynchronously (child_process.spawn, so a server hosted in
 * this process keeps serving) and resolves with its output and exit code once it exits; rejects if it
 * cannot be started or runs longer than `timeoutMs` (it is then killed).
 *
 * `--insecure-policy` means no trust policy (`policy.json`) is needed or read. The environment isolates
 * skopeo from the machine's and the user's configuration: `REGISTRY_AUTH_FILE` is an empty `{}` file,
 * `HOME`, `XDG_RUNTIME_DIR`, `XDG_CONFIG_HOME` and `DOCKER_CONFIG` point into a private temp directory
 * (so no `auth.json` or `~/.docker/config.json` is read), and `CONTAINERS_REGISTRIES_CONF` is an empty
 * file (no mirrors, no blocked registries, no short-name aliases).
 */
export function runSkopeo(args: string[], opts: SkopeoOptions = {}): Promise<SkopeoResult> {
  const home = isolatedHome();
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_RUNTIME_DIR: join(home, "run"),
    XDG_CONFIG_HOME: join(home, "config"),
    DOCKER_CONFIG: join(home, "docker"),
    REGISTRY_AUTH_FILE: join(home, "auth.json"),
    CONTAINERS_REGISTRIES_CONF: join(home, "registries.conf"),
    ...opts.env,
  };
  return new Promise((resolve, reject) => {
    const child = spawn("skopeo", ["--insecure-policy", ...args], {
      cwd: opts.cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const out = Buffer.concat(stdout).toString("utf8");
      const err = Buffer.concat(stderr).toString("utf8");
      if (timedOut) {
        reject(new Error(`skopeo ${args.join(" ")} timed out after ${timeoutMs} ms; stderr: ${err}`));
      } else if (code === null) {
        reject(new Error(`skopeo ${args.join(" ")} killed by ${signal}; stderr: ${err}`));
      } else {
        resolve({ stdout: out, stderr: err, code });
      }
    });
  });
}
