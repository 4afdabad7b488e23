import type { Readable, Writable } from "node:stream";
import { type SpanAttributes, traced } from "../../core/tracing.js";
import type { BlobDriver, BlobExpectation, BlobListEntry, BlobRange, BlobStat } from "./blob-driver.js";

/**
 * `inner` with each operation in a span (ADR 0042): `blob.stat`, `blob.read` (opening the stream),
 * `blob.pipeTo` (the whole transfer), `blob.put`, `blob.append`, `blob.commit`, `blob.delete`, and
 * `blob.list` (the whole listing), each with the driver kind and the key. Results and errors are
 * `inner`'s, unchanged. openBlobDriver wraps a driver in it only while tracing is on.
 */
export function tracedBlobDriver(inner: BlobDriver): BlobDriver {
  const on = (key: string, extra?: SpanAttributes): SpanAttributes => ({
    "wharf.blob.driver": inner.kind,
    "wharf.blob.key": key,
    ...extra,
  });
  return {
    kind: inner.kind,
    stat: (key: string): Promise<BlobStat | undefined> => traced("blob.stat", on(key), () => inner.stat(key)),
    // `expect` must reach the inner driver: it is what refuses a blob of the wrong size (ADR 0040).
    read: (key: string, range?: BlobRange, expect?: BlobExpectation): Promise<Readable> =>
      traced("blob.read", on(key, { "wharf.blob.range_start": range?.start }), () =>
        inner.read(key, range, expect),
      ),
    pipeTo: (key: string, sink: Writable, range?: BlobRange, expect?: BlobExpectation): Promise<void> =>
      traced("blob.pipeTo", on(key, { "wharf.blob.range_start": range?.start }), () =>
        inner.pipeTo(key, sink, range, expect),
      ),
    put: (key: string, source: Readable): Promise<number> =>
      traced("blob.put", on(key), () => inner.put(key, source)),
    append: (key: string, source: Readable): Promise<number> =>
      traced("blob.append", on(key), () => inner.append(key, source)),
    commit: (from: string, to: string): Promise<void> =>
      traced("blob.commit", on(to, { "wharf.blob.from": from }), () => inner.commit(from, to)),
    delete: (key: string): Promise<void> => traced("blob.delete", on(key), () => inner.delete(key)),
    list: (prefix: string): AsyncIterable<BlobListEntry> => tracedList(inner, prefix, on(prefix)),
    close: () => inner.close(),
  };
}

/** `inner.list(prefix)` (which may throw synchronously), its whole iteration in one span. */
function tracedList(
  inner: BlobDriver,
  prefix: string,
  attributes: SpanAttributes,
): AsyncIterable<BlobListEntry> {
  const entries = inner.list(prefix);
  return {
    [Symbol.asyncIterator]() {
      const iterator = entries[Symbol.asyncIterator]();
      let done: (() => void) | undefined;
      let failed: ((err: unknown) => void) | undefined;
      const settled = new Promise<void>((resolve, reject) => {
        done = resolve;
        failed = reject;
      });
      // The span lasts until the listing ends, fails, or its consumer stops early.
      void traced("blob.list", attributes, () => settled).catch(() => {});
      return {
        async next() {
          try {
            const step = await iterator.next();
            if (step.done) done?.();
            return step;
          } catch (err) {
            failed?.(err);
            throw err;
          }
        },
        async return(value?: unknown) {
          done?.();
          return (await iterator.return?.(value)) ?? { done: true, value: undefined };
        },
      };
    },
  };
}
