// Load and baseline shared by the workers dimension of `bench:api` and `bench:registry`.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { firstJsonLine, spawnTracked, stop, treeCpuSecondsOf } from "../registry/processes.js";
import { type WrkResult, wrk } from "../registry/wrk.js";

const WARMUP_SECONDS = 2;
/** wrk's shape for every workers figure: 2 threads (this machine's cores), 32 connections. */
export const WRK = { threads: 2, connections: 32 };

/**
 * A wrk run with the CPU per request (µs) that `cpuSeconds` counted over the measured window, and
 * how busy the whole machine was meanwhile (0–1 of all cores, from /proc/stat): near 1, the cores,
 * not the server, bound the rate.
 */
export interface LoadFigure extends WrkResult {
  cpuUs: number;
  machineBusy: number;
}

/** Busy and total jiffies of all cores so far (the first line of /proc/stat). */
function machineJiffies(): { busy: number; total: number } {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "")
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const total = fields.reduce((sum, n) => sum + n, 0);
  // idle and iowait are the 4th and 5th fields.
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total };
}

/** wrk against `url` for a 2 s warm-up, then `seconds` measured. */
export async function wrkWithCpu(
  url: string,
  headers: Record<string, string>,
  seconds: number,
  cpuSeconds: () => number,
): Promise<LoadFigure> {
  await wrk(url, { ...WRK, headers, seconds: WARMUP_SECONDS });
  const before = cpuSeconds();
  const machine = machineJiffies();
  const result = await wrk(url, { ...WRK, headers, seconds });
  const after = machineJiffies();
  return {
    ...result,
    cpuUs: ((cpuSeconds() - before) / result.requests) * 1e6,
    machineBusy: (after.busy - machine.busy) / Math.max(1, after.total - machine.total),
  };
}

/** `workers` bare node:cluster workers answering `body` (bare-cluster.ts) under the same wrk load. */
export async function bareClusterLoad(workers: number, seconds: number, body?: string): Promise<LoadFigure> {
  const script = join(new URL(".", import.meta.url).pathname, "bare-cluster.ts");
  const args = ["--import", "tsx", script, String(workers), ...(body === undefined ? [] : [body])];
  const child = spawnTracked(process.execPath, args, { stdio: ["pipe", "pipe", "inherit"] });
  try {
    const { pid, url } = await firstJsonLine<{ pid: number; url: string }>(child, "bare node:cluster");
    return await wrkWithCpu(url, {}, seconds, () => treeCpuSecondsOf(pid));
  } finally {
    await stop(child);
  }
}
