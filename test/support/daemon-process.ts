/**
 * A daemon a test starts (dockerd, containerd): spawned with its output in a log file, killed when
 * the test process exits however it exits, stopped with SIGTERM (SIGKILL after a grace period).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { openSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const child of running)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** A running daemon: its process and log, and how to stop it. */
export interface Daemon {
  child: ChildProcess;
  log: string;
  /** The last lines of its log (for failure messages). */
  logTail(lines?: number): Promise<string>;
  /** SIGTERM, then SIGKILL after `graceMs` (default 20 s); resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Spawns `command args` with stdout and stderr appended to `log`. */
export function spawnDaemon(command: string, args: string[], log: string): Daemon {
  const fd = openSync(log, "a");
  const child = spawn(command, args, { stdio: ["ignore", fd, fd], env: { ...process.env } });
  running.add(child);
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null) resolve();
    child.once("exit", () => {
      running.delete(child);
      resolve();
    });
  });
  const logTail = async (lines = 20) =>
    (await readFile(log, "utf8").catch(() => "")).split("\n").slice(-lines).join("\n");
  return {
    child,
    log,
    logTail,
    async stop(graceMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** GET `path` over the unix socket `socketPath`: the status and body, or undefined when nothing answers. */
export function getOverSocket(
  socketPath: string,
  path: string,
): Promise<{ status: number; body: string } | undefined> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path, method: "GET", timeout: 5000 }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", () => resolve(undefined));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/**
 * Waits until `ready()` is true, failing with the daemon's log tail when it exits first or
 * `timeoutMs` passes (a poll with a deadline, never a fixed sleep).
 */
export async function waitForDaemon(
  daemon: Daemon,
  what: string,
  ready: () => Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ready())) {
    if (daemon.child.exitCode !== null || daemon.child.signalCode !== null) {
      throw new Error(
        `${what} exited (${daemon.child.exitCode ?? daemon.child.signalCode}):\n${await daemon.logTail()}`,
      );
    }
    if (Date.now() > deadline)
      throw new Error(`${what} did not start within ${timeoutMs} ms:\n${await daemon.logTail()}`);
    await sleep(100);
  }
}

/** What a client command printed and its exit code (non-zero is returned, not thrown). */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `command args` with `env` added, killing it after `timeoutMs` (default 180 s). */
export function runCommand(
  command: string,
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 180_000,
): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { env: { ...process.env, ...env }, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
