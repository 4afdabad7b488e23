import type { Clock } from "../../core/clock.js";

/**
 * When each cached tag was last checked against its upstream (ADR 0052): in memory, per process.
 * A tag checked less than its upstream's `tagTtl` ago is served without asking the upstream; a
 * restarted process (or another replica) checks each tag once more, which costs one HEAD.
 */
export interface TagChecks {
  /** Whether `key` was checked less than `ttlMs` ago. */
  fresh(key: string, ttlMs: number): boolean;
  /** Records that `key` was checked now. */
  checked(key: string): void;
}

/** Bounded: past `max` keys the oldest half is forgotten (those tags are checked once more). */
export function createTagChecks(clock: Clock, max = 100_000): TagChecks {
  const times = new Map<string, number>();
  return {
    fresh(key, ttlMs) {
      const at = times.get(key);
      return at !== undefined && clock.now() - at < ttlMs;
    },
    checked(key) {
      times.delete(key);
      times.set(key, clock.now());
      if (times.size > max) {
        let drop = times.size - Math.floor(max / 2);
        for (const k of times.keys()) {
          if (drop-- <= 0) break;
          times.delete(k);
        }
      }
    },
  };
}
