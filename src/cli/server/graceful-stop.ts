import type { ShutdownConfig } from "../../config/config.js";
import type { RunningServer } from "../../server.js";

/** Writes one log line (`level`, `msg`, fields; see observability/log.ts and ADR 0041). */
export type LogLine = (line: object) => void;

/** One `info` line with the time, for the shutdown's steps. */
export function info(log: LogLine, msg: string, fields: object = {}): void {
  log({ time: new Date().toISOString(), level: "info", msg, ...fields });
}

/**
 * Runs until the first SIGTERM or SIGINT, then stops `server` gracefully (`shutdown started`:
 * `/readyz` 503 at once, the listeners closing after the delay, in-flight requests cut at the
 * timeout; then `stopped`). A second signal during the delay ends it now (logged); later ones are
 * logged and ignored. `stopRequests`, when given, receives a function that takes the shutdown to
 * step `n` as if the n-th signal had come (a `--workers` primary forwards its signals so: a worker
 * that got the terminal's SIGINT itself does not count the primary's as a second one). Resolves
 * once everything stopped; the handlers are removed then.
 */
export async function serveUntilSignalled(
  server: Pick<RunningServer, "close">,
  shutdown: ShutdownConfig,
  log: LogLine,
  stopRequests?: (toStep: (n: number, reason: string) => void) => void,
): Promise<void> {
  let skip: () => void = () => {};
  const skipDelay = new Promise<void>((resolve) => {
    skip = resolve;
  });
  let step = 0;
  let started: (reason: string) => void = () => {};
  const first = new Promise<string>((resolve) => {
    started = resolve;
  });
  const advance = (reason: string) => {
    step++;
    if (step === 1) started(reason);
    else if (step === 2) {
      info(log, "second signal: skipping the shutdown delay", { signal: reason });
      skip();
    } else info(log, "already shutting down", { signal: reason });
  };
  const onSignal = (signal: NodeJS.Signals) => advance(signal);
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
  stopRequests?.((n, reason) => {
    while (step < Math.min(n, 2)) advance(reason);
  });
  try {
    const signal = await first;
    info(log, "shutdown started", { signal, delayMs: shutdown.delayMs, timeoutMs: shutdown.timeoutMs });
    await server.close({ ...shutdown, skipDelay });
  } finally {
    process.off("SIGTERM", onSignal);
    process.off("SIGINT", onSignal);
  }
  info(log, "stopped");
}
