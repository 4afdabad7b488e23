import { readFile } from "node:fs/promises";
import { systemClock } from "../../core/clock.js";
import { type EolProductData, parseEndOfLifeJson } from "../../registry/eol/endoflife-json.js";
import {
  type MatchRule,
  parseMatchRule,
  productProblem,
  storeEolProduct,
} from "../../registry/eol/eol-import.js";
import type { ImportIo, ParsedImport } from "./import-progress.js";
import { type FileImporter, runLocalImport } from "./import-store.js";

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
export async function runEolImport(parsed: ParsedImport, io: ImportIo): Promise<number> {
  let product: string;
  let rules: MatchRule[];
  try {
    if (parsed.operands.length !== 1) throw new Error("name exactly one FILE.json (one product per import)");
    product = typeof parsed.options.product === "string" ? parsed.options.product : "";
    if (product === "") throw new Error("--product NAME is required");
    const problem = productProblem(product);
    if (problem) throw new Error(problem);
    const matches = (parsed.options.match as string[] | undefined) ?? [];
    if (matches.length === 0)
      throw new Error("--match ORG/REPO:TAGGLOB is required (repeat it for more repos)");
    rules = matches.map(parseMatchRule);
  } catch (err) {
    io.stderr.write(`${COMMAND}: ${(err as Error).message}\n`);
    return 2;
  }
  return runLocalImport(COMMAND, parsed, io, eolImporter(product, rules));
}
