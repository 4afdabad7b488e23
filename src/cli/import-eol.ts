import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import { ConfigError, type ConfigInput, loadConfig } from "../config/config.js";
import { systemClock } from "../core/clock.js";
import { type EolProductData, parseEndOfLifeJson } from "../registry/eol/endoflife-json.js";
import {
  type MatchRule,
  parseMatchRule,
  productProblem,
  storeEolProduct,
} from "../registry/eol/eol-import.js";
import { createImportProgress, type ImportIo } from "./import-progress.js";
import { describeImportFailure, type FileImporter, importFiles, withImportStore } from "./import-store.js";

const COMMAND = "wharf import eol";

/** The importer of one endoflife.date product file with its match rules. */
function eolImporter(product: string, rules: readonly MatchRule[]): FileImporter<EolProductData> {
  return {
    async read(file, sink) {
      const data = parseEndOfLifeJson(await readFile(file, "utf8"));
      sink.start(data.records);
      for (const problem of data.rejected) {
        sink.reject(problem);
        sink.advance();
      }
      return data;
    },
    write: (tx, data, sink) =>
      storeEolProduct(tx, { product, cycles: data.cycles, rules, now: systemClock.now() }, sink),
  };
}

/**
 * `wharf import eol --product NAME --match ORG/REPO:GLOB… FILE.json`: stores the product's cycles and
 * the match rules in one transaction of the configured store. Exit 0 when it committed (refused
 * releases skipped and printed), 1 when it failed (nothing stored), 2 for a usage error. The
 * summary counts cycles and rules.
 */
export async function runEolImport(argv: string[], io: ImportIo): Promise<number> {
  let file: string;
  let input: ConfigInput;
  let strict: boolean;
  let product: string;
  let rules: MatchRule[];
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: {
        product: { type: "string" },
        match: { type: "string", multiple: true },
        strict: { type: "boolean" },
        "data-dir": { type: "string" },
        "database-url": { type: "string" },
      },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length !== 1)
      throw new ConfigError("name exactly one FILE.json (one product per import)");
    file = positionals[0] ?? "";
    product = values.product ?? "";
    if (product === "") throw new ConfigError("--product NAME is required");
    const problem = productProblem(product);
    if (problem) throw new ConfigError(problem);
    if (!values.match || values.match.length === 0) {
      throw new ConfigError("--match ORG/REPO:TAGGLOB is required (repeat it for more repos)");
    }
    rules = values.match.map(parseMatchRule);
    input = { dataDir: values["data-dir"], databaseUrl: values["database-url"] };
    strict = values.strict === true;
    loadConfig(input);
  } catch (err) {
    io.stderr.write(`${COMMAND}: ${(err as Error).message}\n`);
    return 2;
  }
  const progress = createImportProgress({ stream: io.stderr, label: COMMAND });
  try {
    const outcome = await withImportStore(input, (store) =>
      importFiles(store, [file], eolImporter(product, rules), { progress, strict }),
    );
    progress.finish(outcome.summary);
    if (!outcome.failure) return 0;
    io.stderr.write(`${COMMAND}: ${describeImportFailure(outcome.failure)}\n`);
    return 1;
  } catch (err) {
    io.stderr.write(`${COMMAND}: ${(err as Error).message ?? err}\n`);
    return 1;
  }
}
