import { fromPath, type SourceFile } from "../../advisories/import-sources.js";
import { type ImportKind as ParseKind, parseSourceFile } from "../../advisories/parse-source-file.js";
import { loadConfig } from "../../config/config.js";
import type { Store } from "../../storage/store.js";
import {
  createImportProgress,
  type ImportIo,
  type ImportProgress,
  type ImportSummary,
  type ParsedImport,
} from "./import-progress.js";
import {
  describeImportFailure,
  type FileImporter,
  type ImportOutcome,
  importFiles,
  localImportInput,
  withImportStore,
} from "./import-store.js";

/** Options of an advisories or vulnmeta import. */
export interface AdvisoryImportOptions {
  kind: ParseKind;
  /** First rejected record fails its file (rolled back) and stops the run. */
  strict: boolean;
  /** Author of the imported events (default `wharf-import`). */
  author?: string;
  /** Package namespace of YAML files (default `wolfi`). */
  namespace?: string;
}

type Parsed = Extract<ReturnType<typeof parseSourceFile>, { ok: true }>["value"];

/** Reads one already loaded source file; writes its advisories and metadata in the file's transaction. */
function sourceImporter(source: SourceFile, options: AdvisoryImportOptions): FileImporter<Parsed> {
  return {
    async read(_file, sink) {
      const parsed = parseSourceFile(source, {
        kind: options.kind,
        author: options.author ?? "wharf-import",
        ...(options.namespace ? { namespace: options.namespace } : {}),
      });
      if (!parsed.ok) {
        const { location, field, message } = parsed.issue;
        throw new Error(`${location ? `${location}: ` : ""}${field ? `${field}: ` : ""}${message}`);
      }
      sink.start(parsed.value.records);
      for (const issue of parsed.value.rejected) {
        sink.reject(issue);
        sink.advance();
      }
      return parsed.value;
    },
    async write(tx, batch, sink) {
      for (const row of batch.advisories) {
        sink.count(await tx.advisories.upsert(row));
        sink.advance();
      }
      for (const row of batch.metadata) {
        sink.count(await tx.advisories.upsertMetadata(row));
        // An upstream record that is also an advisory was counted with its advisories.
        if (batch.advisories.length === 0) sink.advance();
      }
    },
  };
}

/**
 * Imports every file under `paths` (files, directories recursively, zip archives, OSV `all.json`
 * indexes; see `fromPath`), each file in ONE transaction of `store`, in order. Stops at the first
 * file that fails as a whole (unreadable, not JSON/YAML, or a rejection under `strict`): that file
 * is rolled back, the ones before it stay. Counts are per stored row (advisory or metadata record).
 */
export async function importAdvisoryPaths(
  store: Store,
  paths: readonly string[],
  options: AdvisoryImportOptions,
  progress: ImportProgress,
): Promise<ImportOutcome> {
  const summary: ImportSummary = { created: 0, updated: 0, unchanged: 0, rejected: 0 };
  for (const path of paths) {
    let sources: AsyncGenerator<SourceFile>;
    try {
      sources = fromPath(path);
    } catch (error) {
      return { summary, failure: { file: path, error } };
    }
    try {
      for await (const source of sources) {
        const outcome = await importFiles(store, [source.name], sourceImporter(source, options), {
          progress,
          strict: options.strict,
        });
        summary.created += outcome.summary.created;
        summary.updated += outcome.summary.updated;
        summary.unchanged += outcome.summary.unchanged;
        summary.rejected += outcome.summary.rejected;
        if (outcome.failure) return { summary, failure: outcome.failure };
      }
    } catch (error) {
      return { summary, failure: { file: path, error } };
    }
  }
  return { summary };
}

/**
 * `wharf import advisories|vulnmeta PATH…`: parses the shared options plus `--namespace` and
 * `--author`, imports into the configured store and prints the summary. Exit 0 when every file
 * committed (rejected records skipped), 1 when a file failed (named), 2 for a usage error.
 */
export async function runAdvisoryImport(
  kind: ParseKind,
  parsed: ParsedImport,
  io: ImportIo,
): Promise<number> {
  const command = `wharf import ${kind}`;
  const paths = parsed.operands;
  const input = localImportInput(parsed);
  const { author, namespace } = parsed.options;
  const options: AdvisoryImportOptions = {
    kind,
    strict: parsed.options.strict === true,
    ...(typeof author === "string" && author ? { author } : {}),
    ...(typeof namespace === "string" && namespace ? { namespace } : {}),
  };
  try {
    if (paths.length === 0) throw new Error("name at least one PATH to import");
    loadConfig(input);
  } catch (err) {
    io.stderr.write(`${command}: ${(err as Error).message}\n`);
    return 2;
  }
  const progress = createImportProgress({ stream: io.stderr, label: command });
  try {
    const outcome = await withImportStore(input, (store) =>
      importAdvisoryPaths(store, paths, options, progress),
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
