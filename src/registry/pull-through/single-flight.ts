/**
 * Runs one call per key at a time: while a call for `key` is in flight, later callers get its
 * promise instead of starting their own (so 20 concurrent misses of the same content make one
 * upstream fetch). The key is forgotten when the call settles, so a failure is not remembered.
 */
export interface SingleFlight<T> {
  /** The result of `fn` for `key`, run now unless a call for `key` is already in flight; `leader` says which. */
  run(key: string, fn: () => Promise<T>): { promise: Promise<T>; leader: boolean };
  /** Calls in flight. */
  readonly size: number;
}

/** Creates an empty single-flight group. */
export function createSingleFlight<T>(): SingleFlight<T> {
  const flights = new Map<string, Promise<T>>();
  return {
    run(key, fn) {
      const running = flights.get(key);
      if (running) return { promise: running, leader: false };
      const promise = (async () => {
        try {
          return await fn();
        } finally {
          flights.delete(key);
        }
      })();
      flights.set(key, promise);
      return { promise, leader: true };
    },
    get size() {
      return flights.size;
    },
  };
}
