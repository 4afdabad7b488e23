import { type JsonSource, type JsonStreamProblem, streamJson } from "../../codec/json-stream.js";
import { VulnReportFormatError } from "./format-error.js";

export type { JsonSource };

/** Where a value sits in a document: `$.a.*.b` (array indices as `*`) and its concrete indices. */
export interface JsonPathHit {
  /** The path with every array index written `*`, e.g. `$.Results.*.Vulnerabilities.*`. */
  path: string;
  /** The array indices along the path, outermost first. */
  indices: number[];
  value: unknown;
}

/** A scanner report's refusals, as the report's readers word them. */
function refuse(problem: JsonStreamProblem, detail: string): VulnReportFormatError {
  switch (problem) {
    case "malformed":
      return new VulnReportFormatError(`the report is not valid JSON (malformed or cut short): ${detail}`);
    case "trailing":
      return new VulnReportFormatError("the report is not valid JSON: data after the end of the document");
    case "empty":
      return new VulnReportFormatError("the report is not valid JSON: it is empty");
    default:
      return new VulnReportFormatError("the report is not valid JSON: it is empty or cut short");
  }
}

/**
 * Parses the JSON document `source` as it streams (`streamJson`) and calls `onHit` for every value
 * at one of `paths` (`$`-rooted, `*` for any key or index), in document order, with its path in the
 * `$.a.*.b` form. Rejects with {@link VulnReportFormatError} for malformed, empty or truncated JSON,
 * or with whatever `onHit` throws. The upload's size is capped where the body is read.
 */
export function streamJsonPaths(
  source: JsonSource,
  paths: readonly string[],
  onHit: (hit: JsonPathHit) => void,
): Promise<void> {
  return streamJson(source, paths, { refuse }, ({ keys, value }) => {
    const indices: number[] = [];
    let path = "$";
    for (const k of keys) {
      if (typeof k === "number") {
        indices.push(k);
        path += ".*";
      } else path += `.${String(k)}`;
    }
    onHit({ path, indices, value });
  });
}
