import { readlinkSync } from "node:fs";
import { hostname } from "node:os";

/**
 * This process's host as dispatcher heartbeats record it: the host name, plus the PID namespace
 * (`/proc/self/ns/pid`) where Linux exposes it. Two processes with the same value can see each
 * other's PIDs; containers that share a host name but not a PID namespace get different values.
 */
export function localHostIdentity(): { host: string; pidsComparable: boolean } {
  try {
    return { host: `${hostname()} ${readlinkSync("/proc/self/ns/pid")}`, pidsComparable: true };
  } catch {
    return { host: hostname(), pidsComparable: false };
  }
}

/**
 * Whether process `pid` exists, asked of the kernel with signal 0 (nothing is delivered). EPERM
 * means it exists under another user. Only meaningful for a PID of the same PID namespace.
 */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
