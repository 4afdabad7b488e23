import { JSONParser } from "@streamparser/json";
import { SbomFormatError } from "./sbom-errors.js";

/** A value at one of the selected paths: its keys from the root (array indices as numbers). */
export interface JsonHit {
  keys: (string | number)[];
  value: unknown;
}

/** Bytes of a document: whole, or as a stream of chunks (read once). */
export type JsonSource = Uint8Array | AsyncIterable<Uint8Array>;

/**
 * Parses the JSON document `source` as it streams and calls `onHit` for every value at one of
 * `paths` (`$`-rooted, `*` for any key or index), in document order. Only those values are built:
 * the rest is tokenized and dropped, so memory grows with the largest selected value, not with the
 * document. Rejects with {@link SbomFormatError} for malformed, empty or truncated JSON, or more
 * than `maxBytes` bytes, or with whatever `onHit` throws.
 */
export async function streamJson(
  source: JsonSource,
  paths: readonly string[],
  maxBytes: number,
  onHit: (hit: JsonHit) => void,
): Promise<void> {
  const parser = new JSONParser({ paths: [...paths], keepStack: false });
  let failure: unknown;
  let ended = false;
  let sawContent = false;
  let bytes = 0;
  parser.onValue = ({ value, key, stack }) => {
    if (failure !== undefined) return;
    const keys = [...stack.slice(1).map((s) => s.key), key] as (string | number)[];
    try {
      onHit({ keys, value });
    } catch (err) {
      failure = err;
    }
  };
  parser.onError = (err) => {
    failure ??= new SbomFormatError(`the SBOM is not valid JSON (malformed or cut short): ${err.message}`);
  };
  parser.onEnd = () => {
    ended = true;
  };
  const write = (chunk: Uint8Array) => {
    bytes += chunk.length;
    if (bytes > maxBytes) {
      failure ??= new SbomFormatError(`the SBOM is larger than the limit of ${maxBytes} bytes`);
      return;
    }
    if (failure !== undefined || chunk.length === 0) return;
    if (ended) {
      if (Buffer.from(chunk).toString("utf8").trim() !== "")
        failure = new SbomFormatError("the SBOM is not valid JSON: data after the end of the document");
      return;
    }
    if (!sawContent && Buffer.from(chunk).toString("utf8").trim() !== "") sawContent = true;
    parser.write(chunk);
  };
  if (source instanceof Uint8Array) write(source);
  else {
    for await (const chunk of source) {
      write(chunk);
      if (failure !== undefined) break;
    }
  }
  if (failure === undefined && !sawContent) failure = new SbomFormatError("the SBOM is empty");
  if (failure === undefined && !ended) parser.end();
  if (failure !== undefined) throw failure;
  if (!ended) throw new SbomFormatError("the SBOM is not valid JSON: it is cut short");
}
