// Child processes of `bench:registry`: every one spawned here is killed when the benchmark exits,
// whether it finishes, fails or is interrupted; plus RSS sampling from /proc.
import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const children = new Set<ChildProcess>();
const exitHooks: Array<() => void> = [];

function killAll(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  children.clear();
}

process.on("exit", () => {
  killAll();
  for (const hook of exitHooks) hook();
});
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping`);
    process.exit(130);
  });
}

/** Runs `hook` (synchronously) when the process exits, however it exits. */
export function onExit(hook: () => void): void {
  exitHooks.push(hook);
}

/** spawn, remembered so it is killed on exit. */
export function spawnTracked(command: string, args: string[], options: SpawnOptions): ChildProcess {
  const child = spawn(command, args, options);
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** Stops `child` with SIGTERM (SIGKILL after `graceMs`) and waits for it. */
export async function stop(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * The first JSON object line `child` prints on stdout (rejects if it exits first or after
 * `timeoutMs`). Every other line is copied to stderr with `[what]` in front (e.g. `--trace-gc`
 * output): the pipe must keep being drained, or a child writing to it would block once it is full.
 */
export function firstJsonLine<T>(child: ChildProcess, what: string, timeoutMs = 60_000): Promise<T> {
  if (!child.stdout) throw new Error(`${what}: stdout is not piped`);
  const lines = createInterface({ input: child.stdout });
  let found = false;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${what} did not start within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const onExit = (code: number | null) => reject(new Error(`${what} exited (${code}) before it was ready`));
    child.once("exit", onExit);
    lines.on("line", (line) => {
      if (!found && line.startsWith("{")) {
        try {
          const value = JSON.parse(line) as T;
          found = true;
          clearTimeout(timer);
          child.off("exit", onExit);
          resolve(value);
          return;
        } catch {
          // not the announcement: pass it on like any other line
        }
      }
      process.stderr.write(`[${what}] ${line}\n`);
    });
  });
}

/** Resident set size of `pid` in bytes (VmRSS), or NaN when it cannot be read. */
export function rssOf(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

export interface RssSummary {
  /** RSS when sampling began (before the transfer). */
  start: number;
  max: number;
  end: number;
  /** max − start. */
  growth: number;
  samples: number;
}

/** Samples `pid`'s RSS every `intervalMs` until `stop()` (which may be called again: same summary). */
export function sampleRss(pid: number, intervalMs = 100): { stop(): RssSummary } {
  const samples = [rssOf(pid)];
  const timer = setInterval(() => samples.push(rssOf(pid)), intervalMs);
  let summary: RssSummary | undefined;
  return {
    stop() {
      if (summary) return summary;
      clearInterval(timer);
      samples.push(rssOf(pid));
      const valid = samples.filter((s) => Number.isFinite(s));
      const start = valid[0] ?? Number.NaN;
      const max = Math.max(...valid);
      summary = { start, max, end: valid.at(-1) ?? Number.NaN, growth: max - start, samples: valid.length };
      return summary;
    },
  };
}

/** CPU time `pid` has used so far (user + system, all threads), in seconds; NaN when unreadable. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command (which may contain spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** USER_HZ: /proc/<pid>/stat counts CPU time in these ticks (100 on Linux for every common arch). */
const CLOCK_TICKS = 100;

/** `pid` and every process descended from it (children listed by /proc/<pid>/task/<tid>/children). */
export function processTreeOf(pid: number): number[] {
  const tree: number[] = [];
  const visit = (p: number) => {
    tree.push(p);
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return;
    }
    for (const tid of tasks) {
      let children = "";
      try {
        children = readFileSync(`/proc/${p}/task/${tid}/children`, "utf8");
      } catch {
        continue;
      }
      for (const child of children.split(" ").filter((c) => c !== "")) visit(Number(child));
    }
  };
  visit(pid);
  return tree;
}

/**
 * CPU seconds used so far by `pid` and its descendants alive now (e.g. `wharf serve --workers N`:
 * the primary and its workers). A descendant that exits takes its time with it, so compare two
 * readings only across a window in which the tree did not change.
 */
export function treeCpuSecondsOf(pid: number): number {
  return processTreeOf(pid).reduce((sum, p) => {
    const seconds = cpuSecondsOf(p);
    return Number.isFinite(seconds) ? sum + seconds : sum;
  }, 0);
}
