import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { commandAvailable } from "../support/skopeo.js";

/** One backend server of a front: a replica's loopback port. */
export interface HaproxyServer {
  name: string;
  port: number;
}

/** A front HAProxy listens on and the replicas' ports behind it (round-robin, checked on /readyz). */
export interface HaproxyFront {
  name: string;
  port: number;
  servers: HaproxyServer[];
  /** Talk HTTP/2 to the servers (gRPC needs it end to end; HTTP/1.1 clients are converted). */
  h2?: boolean;
}

/** What HAProxy logged for one proxied request (parsed from its log line). */
export interface HaproxyLogLine {
  /** The request's `x-soak-id` header, or "" when it had none (skopeo). */
  soakId: string;
  frontend: string;
  /** The server that got the request (`<NOSRV>` when none). */
  server: string;
  status: number;
  /** HAProxy's termination state, e.g. `----` (normal) or `SH--` (the server aborted). */
  termination: string;
}

/** What HAProxy logged so far. */
export interface HaproxyLog {
  /** Request log lines by `x-soak-id`, for requests that carried one. */
  logById: Map<string, HaproxyLogLine>;
  /** Every line that was not a request log (warnings, server state changes). */
  notices: string[];
}

/** A running HAProxy in front of the replicas. */
export interface Haproxy {
  /** Reads its log file. */
  readLog(): HaproxyLog;
  stop(): Promise<void>;
}

/** The one line to print when HAProxy is missing (the soak never silently skips). */
export const HAPROXY_MISSING =
  "haproxy is not installed: run `apt-get update && apt-get install -y haproxy` (CI's .ci/run installs it)";

/** The `haproxy` executable: on PATH, or where Debian puts it (/usr/sbin may be off a user's PATH). */
export function haproxyBinary(): string | undefined {
  if (commandAvailable("haproxy")) return "haproxy";
  return ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"].find((path) => existsSync(path));
}

// Fields separated by "|" so parsing needs no quoting rules: the captured x-soak-id, frontend,
// server, status and termination state.
const LOG_FORMAT = "soak|%[capture.req.hdr(0)]|%ft|%s|%ST|%tsc";

/**
 * The configuration: HTTP mode, round-robin, health checks on `/readyz` every 500 ms (2 failures
 * mark a server down, 2 successes up), connection failures retried on another server (safe: nothing
 * was sent), GET and HEAD also when a replica closed without answering, and one log line per request
 * on stdout.
 */
export function haproxyConfig(fronts: HaproxyFront[]): string {
  const lines = [
    "global",
    "  log stdout format raw local0",
    "  maxconn 4096",
    "defaults",
    "  mode http",
    "  log global",
    `  log-format "${LOG_FORMAT}"`,
    "  option redispatch",
    "  retries 3",
    "  retry-on conn-failure empty-response",
    "  timeout connect 2s",
    "  timeout client 120s",
    "  timeout server 120s",
    "  timeout http-request 30s",
    "  default-server inter 500ms fall 2 rise 2",
  ];
  for (const front of fronts) {
    lines.push(
      `frontend ${front.name}`,
      `  bind 127.0.0.1:${front.port}`,
      "  http-request capture req.hdr(x-soak-id) len 64",
      `  default_backend ${front.name}_replicas`,
      `backend ${front.name}_replicas`,
      "  balance roundrobin",
      // A request that reached a replica may have taken effect: only GET and HEAD are sent again
      // when a replica closes without answering (killed, its idle connection not yet seen closed).
      "  http-request disable-l7-retry if !METH_GET",
      "  option httpchk GET /readyz",
      // Without it HAProxy holds back parts of HTTP/2 frames it expects to complete (MSG_MORE): an
      // HTTP/1.1 request converted to HTTP/2 then waits ~200 ms for the kernel's timer.
      ...(front.h2 ? ["  option http-no-delay"] : []),
      "  http-check expect status 200",
      ...front.servers.map(
        (s) => `  server ${s.name} 127.0.0.1:${s.port} check${front.h2 ? " proto h2 check-proto h1" : ""}`,
      ),
    );
  }
  return `${lines.join("\n")}\n`;
}

/** Parses one of our log lines; undefined for anything else. */
export function parseLogLine(line: string): HaproxyLogLine | undefined {
  const fields = line.trim().split("|");
  if (fields.length !== 6 || fields[0] !== "soak") return undefined;
  const [, soakId = "", frontend = "", server = "", status = "", termination = ""] = fields;
  return { soakId: soakId === "-" ? "" : soakId, frontend, server, status: Number(status), termination };
}

/** Starts HAProxy with `fronts` (config written into `dir`); resolves once it runs. */
export async function startHaproxy(binary: string, dir: string, fronts: HaproxyFront[]): Promise<Haproxy> {
  const configFile = join(dir, "haproxy.cfg");
  await writeFile(configFile, haproxyConfig(fronts));
  const check = spawn(binary, ["-c", "-q", "-f", configFile], { stdio: ["ignore", "ignore", "pipe"] });
  let checkErr = "";
  check.stderr.on("data", (c: Buffer) => {
    checkErr += c.toString();
  });
  const checked = await new Promise<number | null>((resolve) => check.once("exit", resolve));
  if (checked !== 0) throw new Error(`haproxy refused its configuration: ${checkErr}`);

  // Straight into a file: a pipe this process drains could fill while it is busy, and HAProxy drops
  // log lines it cannot write at once.
  const logFile = join(dir, "haproxy.log");
  const logFd = openSync(logFile, "a");
  const child: ChildProcess = spawn(binary, ["-db", "-f", configFile], { stdio: ["ignore", logFd, logFd] });
  closeSync(logFd);
  const reap = () => child.kill("SIGKILL");
  process.once("exit", reap);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // Running once every front accepts connections.
  await waitForPorts(
    fronts.map((f) => f.port),
    child,
  );
  return {
    readLog() {
      const logById = new Map<string, HaproxyLogLine>();
      const notices: string[] = [];
      for (const line of readFileSync(logFile, "utf8").split("\n")) {
        const parsed = parseLogLine(line);
        if (parsed === undefined) {
          if (line.trim() !== "") notices.push(line);
        } else if (parsed.soakId !== "") logById.set(parsed.soakId, parsed);
      }
      return { logById, notices };
    },
    async stop() {
      process.removeListener("exit", reap);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

async function waitForPorts(ports: number[], child: ChildProcess): Promise<void> {
  const { connect } = await import("node:net");
  const deadline = Date.now() + 10_000;
  for (const port of ports) {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`haproxy exited ${child.exitCode} at start-up`);
      const open = await new Promise<boolean>((resolve) => {
        const socket = connect(port, "127.0.0.1");
        socket.once("connect", () => {
          socket.destroy();
          resolve(true);
        });
        socket.once("error", () => resolve(false));
      });
      if (open) break;
      if (Date.now() > deadline) throw new Error(`haproxy did not listen on ${port} within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
