import { JSONParser } from "@streamparser/json";
import { VulnReportFormatError } from "./format-error.js";

/** Where a value sits in a document: `$.a.*.b` (array indices as `*`) and its concrete indices. */
export interface JsonPathHit {
  /** The path with every array index written `*`, e.g. `$.Results.*.Vulnerabilities.*`. */
  path: string;
  /** The array indices along the path, outermost first. */
  indices: number[];
  value: unknown;
}

/** Bytes of a document: whole, or as a stream of chunks (read once). */
export type JsonSource = Uint8Array | AsyncIterable<Uint8Array>;

/**
 * Parses the JSON document `source` as it streams and calls `onHit` for every value at one of
 * `paths` (`$`-rooted, `*` for any key or index), in document order. Only those values are built:
 * everything else is tokenized and dropped, so memory grows with the largest selected value, not
 * with the document. Rejects with {@link VulnReportFormatError} for malformed or truncated JSON, or
 * with whatever `onHit` throws.
 */
export async function streamJsonPaths(
  source: JsonSource,
  paths: readonly string[],
  onHit: (hit: JsonPathHit) => void,
): Promise<void> {
  const parser = new JSONParser({ paths: [...paths], keepStack: false });
  let failure: unknown;
  let ended = false;
  let empty = true;
  parser.onValue = ({ value, key, stack }) => {
    if (failure !== undefined) return;
    const keys = [...stack.slice(1).map((s) => s.key), key];
    const indices: number[] = [];
    let path = "$";
    for (const k of keys) {
      if (typeof k === "number") {
        indices.push(k);
        path += ".*";
      } else path += `.${String(k)}`;
    }
    try {
      onHit({ path, indices, value });
    } catch (err) {
      failure = err;
    }
  };
  parser.onError = (err) => {
    failure ??= new VulnReportFormatError(
      `the report is not valid JSON (malformed or cut short): ${err.message}`,
    );
  };
  parser.onEnd = () => {
    ended = true;
  };
  const write = (chunk: Uint8Array) => {
    if (failure !== undefined || chunk.length === 0) return;
    if (ended) {
      if (new TextDecoder().decode(chunk).trim() !== "") {
        failure = new VulnReportFormatError(
          "the report is not valid JSON: data after the end of the document",
        );
      }
      return;
    }
    if (empty && new TextDecoder().decode(chunk).trim() !== "") empty = false;
    parser.write(chunk);
  };
  if (source instanceof Uint8Array) write(source);
  else {
    for await (const chunk of source) {
      write(chunk);
      if (failure !== undefined) break;
    }
  }
  if (failure === undefined && empty)
    failure = new VulnReportFormatError("the report is not valid JSON: it is empty");
  if (failure === undefined && !ended) parser.end();
  if (failure !== undefined) throw failure;
  if (!ended) throw new VulnReportFormatError("the report is not valid JSON: it is empty or cut short");
}
