// Progress of long commands (imports, gc, deliveries wait): a bar redrawn in place by cli-progress
// on a terminal; on anything else (a log, a pipe, CI) each command writes plain lines itself, at
// most every PLAIN_LINE_INTERVAL_MS. Here, beside the client commands, because both they and the
// server-side commands use it and the client tree may import nothing outside it (ADR 0028).
import { createRequire } from "node:module";
import type { GenericFormatter, MultiBar, Options, Params, SingleBar } from "cli-progress";

/** The stream a progress display writes to: a TTY (a bar redrawn in place) or not (plain lines). */
export type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/** Least time between two plain progress lines when the stream is not a TTY. */
export const PLAIN_LINE_INTERVAL_MS = 5000;
/** Least time between two redraws of a bar on a TTY (cli-progress's throttle: 10 per second). */
export const TTY_REDRAW_INTERVAL_MS = 100;

/** What the bar line says besides the bar: `{label}: {head} [####----] {tail}, ETA 3s`. */
export interface BarStatus {
  /** Before the bar, e.g. the file or phase. */
  head: string;
  /** After the bar, e.g. `25/100 records, 25/s`. */
  tail: string;
  /** Done so far, out of `total`; no bar (and no ETA) when `total` is undefined or 0. */
  done?: number;
  total?: number;
}

/**
 * One status line at the bottom of a terminal, drawn by cli-progress (a MultiBar holding one bar,
 * so lines can be printed above it). Redrawn at most every TTY_REDRAW_INTERVAL_MS from a timer
 * that never keeps the process alive; {@link stop} clears the line (call it before a last message).
 */
export interface TerminalBar {
  /** Sets what the line says (drawn at the next redraw). */
  show(status: BarStatus): void;
  /** Prints `line` on its own line above the bar (at the next redraw, or on stop). */
  log(line: string): void;
  /** Prints what is logged, removes the bar (nothing of it stays) and stops the timer. */
  stop(): void;
}

interface Payload {
  head: string;
  tail: string;
  hasTotal: boolean;
}

type CliProgress = typeof import("cli-progress");

/** True when `stream` is a terminal, where a bar is redrawn in place. */
export function isTerminal(stream: ProgressStream): boolean {
  return stream.isTTY === true;
}

/**
 * A {@link TerminalBar} on `stream` (a TTY), every line prefixed by `label`. `eta` adds
 * cli-progress's estimate of the time left when a total is known. cli-progress loads here, on a
 * terminal only: piped runs never pay for it.
 */
export function terminalBar(
  stream: ProgressStream,
  label: string,
  options: { eta?: boolean } = {},
): TerminalBar {
  const cliProgress = createRequire(import.meta.url)("cli-progress") as CliProgress;
  const format: GenericFormatter = (opts: Options, params: Params, payload: Payload) => {
    const { head, tail, hasTotal } = payload;
    const bar = hasTotal ? ` [${cliProgress.Format.BarFormat(params.progress, opts)}]` : "";
    const eta =
      options.eta && hasTotal && params.value < params.total && Number.isFinite(params.eta) && params.eta > 0
        ? `, ETA ${cliProgress.Format.TimeFormat(params.eta, opts, 1)}`
        : "";
    const line = `${label}: ${head}${bar} ${tail}${eta}`;
    const width = stream.columns || 80;
    return line.length >= width ? line.slice(0, width - 1) : line;
  };
  const multi: MultiBar = new cliProgress.MultiBar({
    stream,
    format,
    barsize: Math.max(10, Math.min(30, (stream.columns || 80) - 70)),
    barCompleteChar: "#",
    barIncompleteChar: "-",
    fps: 1000 / TTY_REDRAW_INTERVAL_MS,
    clearOnComplete: true,
    hideCursor: false,
    linewrap: false,
    gracefulExit: true,
    emptyOnZero: true,
    autopadding: false,
  });
  // The redraw timer never keeps the process alive: a command that fails without stopping the bar
  // still exits.
  const unrefTimer = () => (multi as unknown as { timer?: NodeJS.Timeout | null }).timer?.unref();
  multi.on("update-post", unrefTimer);
  let bar: SingleBar | undefined;
  const payloadOf = (s: BarStatus): Payload => ({
    head: s.head,
    tail: s.tail,
    hasTotal: s.total !== undefined && s.total > 0,
  });
  return {
    show(status) {
      const total = status.total !== undefined && status.total > 0 ? status.total : 1;
      if (!bar) {
        bar = multi.create(total, status.done ?? 0, payloadOf(status));
        multi.update();
        unrefTimer();
        return;
      }
      if (bar.getTotal() !== total) bar.setTotal(total);
      bar.update(status.done ?? 0, payloadOf(status));
    },
    log(line) {
      multi.log(`${line}\n`);
    },
    stop() {
      if (!multi.isActive && !bar) return;
      // A redraw prints the logged lines; then the bar is cleared.
      if (bar) multi.update();
      else
        for (const line of (multi as unknown as { loggingBuffer: string[] }).loggingBuffer.splice(0))
          stream.write(line);
      multi.stop();
    },
  };
}

/**
 * A clock for plain progress lines: `due()` is true at most once per `intervalMs` (the first call
 * after `reset()` counts from then). `now` (ms, for tests) defaults to Date.now.
 */
export function lineTicker(intervalMs = PLAIN_LINE_INTERVAL_MS, now: () => number = Date.now) {
  let last = now();
  return {
    /** True (and counts from now) when `intervalMs` passed since the last line. */
    due(): boolean {
      const at = now();
      if (at - last < intervalMs) return false;
      last = at;
      return true;
    },
    /** A line was just written: the next one is due `intervalMs` from now. */
    reset(): void {
      last = now();
    },
  };
}

/** Seconds as `3s`, `2m05s`, `1h02m` (the plain lines' ETA and elapsed times). */
export function formatSeconds(seconds: number): string {
  const s = Math.ceil(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}
