import type { Readable, Writable } from "node:stream";
import {
  assertValidBlobExpectation,
  assertValidBlobKey,
  assertValidBlobPrefix,
  assertValidBlobRange,
  type BlobDriver,
  type BlobExpectation,
  type BlobListEntry,
  type BlobRange,
  type BlobStat,
} from "./blob-driver.js";

/**
 * `inner` behind the argument checks the {@link BlobDriver} contract promises, so a driver only
 * stores bytes: every method given an invalid key rejects with `TypeError` (`list` with an invalid
 * prefix throws it synchronously), `read` and `pipeTo` given a malformed range (or expected size) reject
 * with `RangeError`, `commit` of a key onto itself rejects with `TypeError`, and `put`/`append` destroy
 * their source when they reject so. All of it before `inner` is called, so before any I/O and with
 * a `pipeTo` sink untouched. Valid calls go to `inner` as they are, one call each.
 *
 * Each driver's factory returns its driver wrapped in this; nothing else needs to call it.
 */
export function validatingBlobDriver(inner: BlobDriver): BlobDriver {
  return new ValidatingBlobDriver(inner);
}

class ValidatingBlobDriver implements BlobDriver {
  readonly kind: BlobDriver["kind"];
  readonly #inner: BlobDriver;

  constructor(inner: BlobDriver) {
    this.kind = inner.kind;
    this.#inner = inner;
  }

  stat(key: string): Promise<BlobStat | undefined> {
    const invalid = failure(assertValidBlobKey, key);
    return invalid !== undefined ? Promise.reject(invalid) : this.#inner.stat(key);
  }

  read(key: string, range?: BlobRange, expect?: BlobExpectation): Promise<Readable> {
    const invalid =
      failure(assertValidBlobKey, key) ??
      failure(assertValidBlobRange, range) ??
      failure(assertValidBlobExpectation, expect);
    return invalid !== undefined ? Promise.reject(invalid) : this.#inner.read(key, range, expect);
  }

  pipeTo(key: string, sink: Writable, range?: BlobRange, expect?: BlobExpectation): Promise<void> {
    const invalid =
      failure(assertValidBlobKey, key) ??
      failure(assertValidBlobRange, range) ??
      failure(assertValidBlobExpectation, expect);
    return invalid !== undefined ? Promise.reject(invalid) : this.#inner.pipeTo(key, sink, range, expect);
  }

  put(key: string, source: Readable): Promise<number> {
    const invalid = failure(assertValidBlobKey, key);
    if (invalid === undefined) return this.#inner.put(key, source);
    source.destroy();
    return Promise.reject(invalid);
  }

  append(key: string, source: Readable): Promise<number> {
    const invalid = failure(assertValidBlobKey, key);
    if (invalid === undefined) return this.#inner.append(key, source);
    source.destroy();
    return Promise.reject(invalid);
  }

  commit(from: string, to: string): Promise<void> {
    const invalid =
      failure(assertValidBlobKey, from) ??
      failure(assertValidBlobKey, to) ??
      (from === to ? new TypeError(`commit needs two different keys, got ${from} twice`) : undefined);
    return invalid !== undefined ? Promise.reject(invalid) : this.#inner.commit(from, to);
  }

  delete(key: string): Promise<void> {
    const invalid = failure(assertValidBlobKey, key);
    return invalid !== undefined ? Promise.reject(invalid) : this.#inner.delete(key);
  }

  list(prefix: string): AsyncIterable<BlobListEntry> {
    assertValidBlobPrefix(prefix);
    return this.#inner.list(prefix);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}

/** What `check` throws for `value`, or undefined when it passes (so a method can reject instead). */
function failure<T>(check: (value: T) => void, value: T): Error | undefined {
  try {
    check(value);
    return undefined;
  } catch (err) {
    return err as Error;
  }
}
