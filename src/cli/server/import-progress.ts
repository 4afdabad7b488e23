import {
  formatSeconds,
  isTerminal,
  lineTicker,
  PLAIN_LINE_INTERVAL_MS,
  type ProgressStream,
  terminalBar,
} from "../client/progress.js";

export { PLAIN_LINE_INTERVAL_MS, type ProgressStream, TTY_REDRAW_INTERVAL_MS } from "../client/progress.js";

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
  /** Clears the bar without a summary (before a failure's message); nothing after `finish`. */
  close(): void;
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

/** A kind's command line as the `wharf` parser read it: its operands (files) and options. */
export interface ParsedImport {
  operands: string[];
  options: Readonly<Record<string, unknown>>;
}

/** Where an import command writes: results on `stdout`, progress, rejections and errors on `stderr`. */
export interface ImportIo {
  stdout: ProgressStream;
  stderr: ProgressStream;
  /** The environment (WHARF_TOKEN, WHARF_API_URL…; default process.env). */
  env?: NodeJS.ProcessEnv;
}

/**
 * A progress display writing to `stream`, every line prefixed by `label` (e.g. `wharf import
 * libraries`). On a TTY: cli-progress's bar redrawn in place (file, bar when the total is known,
 * records, rate per second, ETA), at most every TTY_REDRAW_INTERVAL_MS; a rejection prints its line
 * above the bar. Elsewhere (a log, a pipe): a line when each file starts, a progress line at most
 * every PLAIN_LINE_INTERVAL_MS, and no control characters. `now` (ms, for tests of the plain lines)
 * defaults to `Date.now`.
 */
export function createImportProgress(options: {
  stream: ProgressStream;
  label: string;
  now?: () => number;
}): ImportProgress {
  const { stream, label } = options;
  const now = options.now ?? Date.now;
  const bar = isTerminal(stream) ? terminalBar(stream, label, { eta: true }) : undefined;
  const ticker = lineTicker(PLAIN_LINE_INTERVAL_MS, now);
  let file = "";
  let total: number | undefined;
  let done = 0;
  let startedAt = 0;

  const rate = (at: number) => {
    const seconds = (at - startedAt) / 1000;
    return seconds > 0 ? done / seconds : 0;
  };
  const records = () => (total === undefined ? `${done} records` : `${done}/${total} records`);
  const plainCounts = (at: number) => {
    const perSecond = rate(at);
    const eta =
      total !== undefined && perSecond > 0 && done < total
        ? `, ETA ${formatSeconds((total - done) / perSecond)}`
        : "";
    return `${records()}, ${Math.round(perSecond)}/s${eta}`;
  };
  const draw = () =>
    bar?.show({
      head: file,
      tail: `${records()}, ${Math.round(rate(now()))}/s`,
      done,
      ...(total === undefined ? {} : { total }),
    });

  return {
    startFile(name, totalRecords) {
      file = name;
      total = totalRecords;
      done = 0;
      startedAt = now();
      if (bar) return draw();
      stream.write(`${label}: ${file}${total === undefined ? "" : ` (${total} records)`}\n`);
      ticker.reset();
    },
    advance(n = 1) {
      done += n;
      if (bar) return draw();
      if (ticker.due()) stream.write(`${label}: ${file}: ${plainCounts(now())}\n`);
    },
    reject(record) {
      const line = `${label}: ${describeRejection(record)}`;
      if (bar) bar.log(line);
      else stream.write(`${line}\n`);
    },
    close() {
      bar?.stop();
    },
    finish(summary) {
      bar?.stop();
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
