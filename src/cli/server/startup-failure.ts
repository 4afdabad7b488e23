import { redactUrl } from "../../config/config.js";

/** A Node.js system error (`listen`, `mkdir`, `connect`, DNS…) or a PostgreSQL error, as far as read here. */
interface SystemError {
  code?: unknown;
  syscall?: unknown;
  address?: unknown;
  port?: unknown;
  path?: unknown;
  hostname?: unknown;
  message?: unknown;
}

const FILE_PROBLEMS: Record<string, string> = {
  ENOTDIR: "a part of the path is a file, not a folder",
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  EROFS: "the file system is read-only",
  ENOSPC: "no space left on the device",
  EEXIST: "a file is in the way",
  EISDIR: "a folder is in the way",
};

/**
 * One line (without the `wharf: ` prefix) saying why a command could not start, for errors whose
 * cause an operator can fix: a listen address in use or not available, a database that refuses,
 * cannot be resolved or does not answer in time, a folder that cannot be written. Anything else
 * becomes its message's first line. Never contains a database password: every URL in it is
 * redacted.
 */
export function startupFailureLine(err: unknown): string {
  return redactUrls(describe(err));
}

function describe(err: unknown): string {
  const e = (typeof err === "object" && err !== null ? err : {}) as SystemError;
  const code = typeof e.code === "string" ? e.code : "";
  const where = typeof e.address === "string" ? hostPort(e.address, e.port) : "";
  if (e.syscall === "listen" || e.syscall === "bind") {
    if (code === "EADDRINUSE") {
      return `cannot listen on ${where}: the address is already in use (choose another with --api-addr or --registry-addr)`;
    }
    if (code === "EADDRNOTAVAIL") return `cannot listen on ${where}: no network interface has that address`;
    if (code === "EACCES")
      return `cannot listen on ${where}: permission denied (ports below 1024 need privileges)`;
  }
  if (
    e.syscall === "connect" &&
    (code === "ECONNREFUSED" || code === "EHOSTUNREACH" || code === "ENETUNREACH")
  ) {
    return `cannot reach the database at ${where}: ${code === "ECONNREFUSED" ? "connection refused" : "unreachable"} (is PostgreSQL running there? check --database-url)`;
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") {
    return `cannot reach the database: host ${String(e.hostname ?? "")} not found (check --database-url)`;
  }
  if (typeof e.path === "string" && FILE_PROBLEMS[code] !== undefined) {
    return `cannot write ${e.path}: ${FILE_PROBLEMS[code]} (check --data-dir and --blob-store)`;
  }
  if (code === "28P01" || code === "28000") return `the database refused the login: ${firstLine(e.message)}`;
  const message = firstLine(e.message ?? err);
  return message === "" ? "start-up failed" : message;
}

function hostPort(address: string, port: unknown): string {
  const host = address.includes(":") ? `[${address}]` : address;
  return port === undefined ? host : `${host}:${String(port)}`;
}

function firstLine(value: unknown): string {
  return String(value ?? "").split("\n")[0] ?? "";
}

function redactUrls(line: string): string {
  return line.replace(/postgres(?:ql)?:\/\/\S+/gi, (url) => redactUrl(url));
}
