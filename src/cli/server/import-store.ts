import { type ConfigInput, loadConfig } from "../../config/config.js";
import { openConfiguredStore } from "../../config/open-configured-store.js";
import type { Store } from "../../storage/store.js";
import { configInputOf, STORE_FIELDS } from "./config-options.js";
import {
  createImportProgress,
  describeRejection,
  type ImportIo,
  type ImportProgress,
  type ImportSummary,
  type ParsedImport,
  type RejectedRecord,
  StrictImportError,
} from "./import-progress.js";

/**
 * What an importer reports while it reads and writes one file. `reject` prints and counts the
 * record, and under `--strict` throws StrictImportError (let it propagate: the file rolls back).
 */
export interface ImportSink {
  /** The file has `totalRecords` records (when known): shown as a bar and an ETA. */
  start(totalRecords?: number): void;
  /** `n` (default 1) more records are done, rejected ones included. */
  advance(n?: number): void;
  /** A record is refused: printed, counted, skipped; fatal under `--strict`. */
  reject(record: Omit<RejectedRecord, "file">): void;
  /** A record was stored: new, changed, or already exactly so. */
  count(outcome: "created" | "updated" | "unchanged"): void;
}

/**
 * One kind of local import, per file: `read` parses and validates the file outside any
 * transaction (no store access; reject what is invalid) and returns what `write` stores, which runs
 * inside the file's single transaction `tx`. Either may throw to fail the file as a whole.
 */
export interface FileImporter<Batch> {
  read(file: string, sink: ImportSink): Promise<Batch>;
  write(tx: Store, batch: Batch, sink: ImportSink): Promise<void>;
}

/** Why an import stopped before its last file: the file (rolled back) and the error. */
export interface ImportFailure {
  file: string;
  error: unknown;
}

/** The counts of the files that committed, and the failure that stopped the run, if any. */
export interface ImportOutcome {
  summary: ImportSummary;
  failure?: ImportFailure;
}

/**
 * Imports `files` in order, each in ONE store transaction: a file commits entirely or, when
 * `read`/`write` throws (a StrictImportError under `strict` included), not at all, and the run stops
 * there (files before it stay committed). Progress and rejections go to `progress`; `finish` is
 * left to the caller, which prints the failure too.
 */
export async function importFiles<Batch>(
  store: Store,
  files: readonly string[],
  importer: FileImporter<Batch>,
  options: { progress: ImportProgress; strict: boolean },
): Promise<ImportOutcome> {
  const { progress, strict } = options;
  const summary = emptySummary();
  for (const file of files) {
    const fileSummary = emptySummary();
    const sink: ImportSink = {
      start: (total) => progress.startFile(file, total),
      advance: (n) => progress.advance(n),
      reject(record) {
        const full = { file, ...record };
        if (strict) throw new StrictImportError(full);
        fileSummary.rejected += 1;
        progress.reject(full);
      },
      count(outcome) {
        fileSummary[outcome] += 1;
      },
    };
    try {
      const batch = await importer.read(file, sink);
      await store.transaction((tx) => importer.write(tx, batch, sink));
    } catch (error) {
      return { summary, failure: { file, error } };
    }
    summary.created += fileSummary.created;
    summary.updated += fileSummary.updated;
    summary.unchanged += fileSummary.unchanged;
    summary.rejected += fileSummary.rejected;
  }
  return { summary };
}

/** The one line an import failure prints (after the importer's label): the file and the cause. */
export function describeImportFailure(failure: ImportFailure): string {
  const { file, error } = failure;
  if (error instanceof StrictImportError)
    return `${describeRejection(error.record)}; --strict: ${file} rolled back`;
  const message = error instanceof Error ? error.message : String(error);
  return `${file}: ${message}; nothing of it was imported`;
}

/**
 * Opens the store `wharf gc` would (the `--data-dir` SQLite file or `--database-url`, migrated),
 * runs `fn` on it and closes it, also when `fn` throws.
 */
export async function withImportStore<T>(input: ConfigInput, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openConfiguredStore(loadConfig(input));
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * The whole of a local importer's command once `wharf` parsed it (`declareLocalImport`: FILE… and
 * `--strict`, `--data-dir`, `--database-url`): opens the store, imports the files (`importFiles`),
 * prints the summary and resolves to the exit code: 0 when every file committed (rejected records
 * skipped), 1 when a file failed (it is named; files before it stay imported), 2 for a usage or
 * configuration error. `command` prefixes every line (`wharf import libraries`).
 */
export async function runLocalImport<Batch>(
  command: string,
  parsed: ParsedImport,
  io: ImportIo,
  importer: FileImporter<Batch>,
): Promise<number> {
  const files = parsed.operands;
  const input = localImportInput(parsed);
  try {
    if (files.length === 0) throw new Error("name at least one FILE to import");
    loadConfig(input);
  } catch (err) {
    io.stderr.write(`${command}: ${(err as Error).message}\n`);
    return 2;
  }
  const progress = createImportProgress({ stream: io.stderr, label: command });
  try {
    const outcome = await withImportStore(input, (store) =>
      importFiles(store, files, importer, { progress, strict: parsed.options.strict === true }),
    );
    progress.finish(outcome.summary);
    if (!outcome.failure) return 0;
    io.stderr.write(`${command}: ${describeImportFailure(outcome.failure)}\n`);
    return 1;
  } catch (err) {
    progress.close();
    io.stderr.write(`${command}: ${(err as Error).message ?? err}\n`);
    return 1;
  }
}

/** The store a local import opens: `--data-dir`, `--database-url` (else their variables). */
export function localImportInput(parsed: ParsedImport): ConfigInput {
  return configInputOf(parsed.options, STORE_FIELDS);
}

function emptySummary(): ImportSummary {
  return { created: 0, updated: 0, unchanged: 0, rejected: 0 };
}
