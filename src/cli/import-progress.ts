/** What one import run did to the stored records, counted once per record. */
export interface ImportSummary {
  /** Records stored that did not exist before. */
  created: number;
  /** Records that existed and changed. */
  updated: number;
  /** Records that existed exactly as imported (a re-import of the same file counts only these). */
  unchanged: number;
  /** Records skipped as invalid (each reported through `ImportProgress.reject`). */
  rejected: number;
}

/**
 * One record an importer refused: the file, where in it (`line 12` in JSONL,
 * `$.affected[0].package.ecosystem` in JSON, `advisories[3].events[1]` in YAML), the field at
 * fault (`""` when the whole record is, e.g. bad JSON) and why, in words a person can act on.
 */
export interface RejectedRecord {
  file: string;
  location: string;
  field: string;
  message: string;
}

/**
 * The progress display of a local importer (`wharf import …`). Calls come in this order: for each
 * file `startFile`, then `advance`/`reject` per record; `finish` once at the end.
 */
export interface ImportProgress {
  /** A new file begins; `totalRecords`, when known, lets the display show a bar and an ETA. */
  startFile(file: string, totalRecords?: number): void;
  /** `n` (default 1) more records of the current file are done, rejected ones included. */
  advance(n?: number): void;
  /** Prints the rejected record as one line (file, location, field, message), bar kept intact. */
  reject(record: RejectedRecord): void;
  /** Clears the bar and prints `created N, updated N, unchanged N, rejected N`. */
  finish(summary: ImportSummary): void;
}

/**
 * Thrown by an importer for the first rejected record under `--strict`: the file's transaction
 * rolls back and the command exits 1 naming the file.
 */
export class StrictImportError extends Error {
  /** The record that was refused. */
  readonly record: RejectedRecord;

  constructor(record: RejectedRecord) {
    super(`${describeRejection(record)} (--strict: nothing of ${record.file} was imported)`);
    this.name = "StrictImportError";
    this.record = record;
  }
}

/** The stream a progress display writes to: a TTY (redrawn bar) or not (plain lines). */
export type ProgressStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/** Where an import command writes: results on `stdout`, progress, rejections and errors on `stderr`. */
export interface ImportIo {
  stdout: ProgressStream;
  stderr: ProgressStream;
}

/** Least time between two redraws of the bar on a TTY (at most 10 per second). */
export const TTY_REDRAW_INTERVAL_MS = 100;
/** Least time between two plain progress lines when the stream is not a TTY. */
export const PLAIN_LINE_INTERVAL_MS = 5000;

const CLEAR_LINE = "\r\x1b[2K";

/**
 * A progress display writing to `stream`, every line prefixed by `label` (e.g. `wharf import
 * libraries`). On a TTY: one line redrawn in place (file, bar when the total is known, records,
 * rate per second, ETA), at most every TTY_REDRAW_INTERVAL_MS; a rejection clears it, prints its
 * line and lets the next advance redraw it. Elsewhere (a log, a pipe): a line when each file starts,
 * a progress line at most every PLAIN_LINE_INTERVAL_MS, and no control characters. `now` (ms, for
 * tests) defaults to `Date.now`.
 */
export function createImportProgress(options: {
  stream: ProgressStream;
  label: string;
  now?: () => number;
}): ImportProgress {
  const { stream, label } = options;
  const now = options.now ?? Date.now;
  const tty = stream.isTTY === true;
  let file = "";
  let total: number | undefined;
  let done = 0;
  let startedAt = 0;
  let lastDrawAt = Number.NEGATIVE_INFINITY;
  let barShown = false;

  const rate = (at: number) => {
    const seconds = (at - startedAt) / 1000;
    return seconds > 0 ? done / seconds : 0;
  };
  const counts = (at: number) => {
    const perSecond = rate(at);
    const records = total === undefined ? `${done} records` : `${done}/${total} records`;
    const eta =
      total !== undefined && perSecond > 0 && done < total
        ? `, ETA ${formatSeconds((total - done) / perSecond)}`
        : "";
    return `${records}, ${Math.round(perSecond)}/s${eta}`;
  };
  const clearBar = () => {
    if (barShown) stream.write(CLEAR_LINE);
    barShown = false;
  };
  const drawBar = (at: number) => {
    const width = Math.max(10, Math.min(30, (stream.columns ?? 80) - 60));
    const bar =
      total === undefined || total === 0
        ? ""
        : ` [${"#".repeat(Math.floor((width * Math.min(done, total)) / total)).padEnd(width, "-")}]`;
    let line = `${label}: ${file}${bar} ${counts(at)}`;
    if (stream.columns && line.length >= stream.columns) line = line.slice(0, stream.columns - 1);
    stream.write(`${CLEAR_LINE}${line}`);
    barShown = true;
    lastDrawAt = at;
  };

  return {
    startFile(name, totalRecords) {
      file = name;
      total = totalRecords;
      done = 0;
      startedAt = now();
      if (tty) {
        drawBar(startedAt);
      } else {
        stream.write(`${label}: ${file}${total === undefined ? "" : ` (${total} records)`}\n`);
        lastDrawAt = startedAt;
      }
    },
    advance(n = 1) {
      done += n;
      const at = now();
      if (tty) {
        if (at - lastDrawAt >= TTY_REDRAW_INTERVAL_MS || (total !== undefined && done >= total)) drawBar(at);
      } else if (at - lastDrawAt >= PLAIN_LINE_INTERVAL_MS) {
        stream.write(`${label}: ${file}: ${counts(at)}\n`);
        lastDrawAt = at;
      }
    },
    reject(record) {
      clearBar();
      stream.write(`${label}: ${describeRejection(record)}\n`);
      // Redraw at the next advance, whatever the interval: the bar should not stay away.
      lastDrawAt = Number.NEGATIVE_INFINITY;
    },
    finish(summary) {
      clearBar();
      stream.write(
        `${label}: created ${summary.created}, updated ${summary.updated}, unchanged ${summary.unchanged}, rejected ${summary.rejected}\n`,
      );
    },
  };
}

/** `file line 12: ecosystem: unknown ecosystem "RUST"` (the field left out when the record is at fault). */
export function describeRejection(record: RejectedRecord): string {
  const field = record.field ? `${record.field}: ` : "";
  return `${record.file} ${record.location}: ${field}${record.message}`;
}

function formatSeconds(seconds: number): string {
  const s = Math.ceil(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}
