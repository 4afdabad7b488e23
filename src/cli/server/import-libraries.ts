import { readFile } from "node:fs/promises";
import { storeLibraryVersions } from "../../libraries/library-import.js";
import { type LibraryVersionRecord, parseLibraryVersionLine } from "../../libraries/library-record.js";
import type { ImportIo, ParsedImport } from "./import-progress.js";
import { type FileImporter, runLocalImport } from "./import-store.js";

/**
 * The libraries JSONL importer: one version per line (`parseLibraryVersionLine`; blank lines are
 * skipped), invalid lines rejected as `line N`; the valid ones are upserted and their artifacts
 * re-aggregated in the file's transaction (`storeLibraryVersions`).
 */
export const librariesImporter: FileImporter<LibraryVersionRecord[]> = {
  async read(file, sink) {
    const lines = (await readFile(file, "utf8")).split(/\r?\n/);
    const numbered = lines.flatMap((text, i) => (text.trim() === "" ? [] : [{ text, line: i + 1 }]));
    sink.start(numbered.length);
    const records: LibraryVersionRecord[] = [];
    for (const { text, line } of numbered) {
      const parsed = parseLibraryVersionLine(text);
      if ("problem" in parsed) {
        sink.reject({ location: `line ${line}`, ...parsed.problem });
        sink.advance();
      } else {
        records.push(parsed.record);
      }
    }
    return records;
  },
  write: (tx, records, sink) => storeLibraryVersions(tx, records, sink),
};

/** `wharf import libraries FILE.jsonl…` (see `runLocalImport` for the options and exit codes). */
export function runLibrariesImport(parsed: ParsedImport, io: ImportIo): Promise<number> {
  return runLocalImport("wharf import libraries", parsed, io, librariesImporter);
}
