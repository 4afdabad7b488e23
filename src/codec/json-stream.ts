import { JSONParser } from "@streamparser/json";

/** A value at one of the selected paths: its keys from the root (array indices as numbers). */
export interface JsonHit {
  keys: (string | number)[];
  value: unknown;
}

/** Bytes of a document: whole, or as a stream of chunks (read once). */
export type JsonSource = Uint8Array | AsyncIterable<Uint8Array>;

/**
 * Why a document is refused: not JSON (`malformed`, with the parser's message as `detail`), text
 * after its end (`trailing`), only whitespace (`empty`), no end (`cut-short`), or more bytes than
 * the cap (`too-large`).
 */
export type JsonStreamProblem = "malformed" | "trailing" | "empty" | "cut-short" | "too-large";

/** How a caller of {@link streamJson} caps and words its refusals. */
export interface JsonStreamOptions {
  /** Refuse the document past this many bytes; none when omitted. */
  maxBytes?: number;
  /** The error to reject with for `problem` (the caller's own error type and words). */
  refuse(problem: JsonStreamProblem, detail: string): Error;
}

/**
 * Parses the JSON document `source` as it streams and calls `onHit` for every value at one of
 * `paths` (`$`-rooted, `*` for any key or index), in document order. Only those values are built:
 * the rest is tokenized and dropped, so memory grows with the largest selected value, not with the
 * document. Rejects with `opts.refuse(…)` for a refused document, or with whatever `onHit` throws;
 * a stream is read no further once the document is refused.
 */
export async function streamJson(
  source: JsonSource,
  paths: readonly string[],
  opts: JsonStreamOptions,
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
    failure ??= opts.refuse("malformed", err.message);
  };
  parser.onEnd = () => {
    ended = true;
  };
  const write = (chunk: Uint8Array) => {
    bytes += chunk.length;
    if (opts.maxBytes !== undefined && bytes > opts.maxBytes) {
      failure ??= opts.refuse("too-large", "");
      return;
    }
    if (failure !== undefined || chunk.length === 0) return;
    if (ended) {
      if (!isBlank(chunk)) failure = opts.refuse("trailing", "");
      return;
    }
    // Decoded only until the first non-blank chunk: the rest of a large document is not.
    if (!sawContent && !isBlank(chunk)) sawContent = true;
    parser.write(chunk);
  };
  if (source instanceof Uint8Array) write(source);
  else {
    for await (const chunk of source) {
      write(chunk);
      if (failure !== undefined) break;
    }
  }
  if (failure === undefined && !sawContent) failure = opts.refuse("empty", "");
  if (failure === undefined && !ended) parser.end();
  if (failure !== undefined) throw failure;
  if (!ended) throw opts.refuse("cut-short", "");
}

function isBlank(chunk: Uint8Array): boolean {
  return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("utf8").trim() === "";
}
