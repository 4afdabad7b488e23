import { setBounded } from "../../core/bounded-map.js";
import type { Database } from "./schema.js";

/** A table whose row counts may be cached. */
export type TableName = keyof Database;

/** Entries kept at most; beyond this the oldest are dropped. */
const MAX_ENTRIES = 1000;

/**
 * Short-lived cache of list totals (`COUNT(*)` of a filter), so paging through a large result does
 * not recount it for every page.
 *
 * Exact for writes made through this process's store: every write bumps its tables' generation,
 * and an entry is only served while the generation it was counted under is current (and a count
 * that raced a write is never stored as current). Writes by other processes invalidate through the
 * store's change feed (PostgreSQL), and otherwise become visible when the entry expires, after at
 * most `ttlMs`. `ttlMs` 0 disables caching.
 *
 * Large totals are the exception (ADR 0044): a total of at least `large.minTotal` rows (an exact
 * count that costs tens of milliseconds or more) is served for `large.ttlMs` even across writes to
 * its table, so it may lag them by that long; only `invalidateAll` drops it early. Otherwise every
 * tag push would make the next page of a million-tag list count a million rows again.
 */
export interface CountCache {
  /** The current generation of `table`; pass it to `set` after counting. */
  generation(table: TableName): number;
  /** A cached, still valid total for `key` of `table`. */
  get(table: TableName, key: string): bigint | undefined;
  /** Stores a total counted while `table` was at `generation`. */
  set(table: TableName, key: string, generation: number, total: bigint): void;
  /** Marks `tables` as written: their cached totals are no longer served. */
  invalidate(tables: readonly string[]): void;
  /** Marks every table as written (changes may have been missed). */
  invalidateAll(): void;
}

/** Totals from this many rows up are large (see CountCache). */
export const LARGE_COUNT_MIN = 100_000;
/** How long a large total is served, writes or not (see CountCache). */
export const LARGE_COUNT_TTL_MS = 30_000;

/** How CountCache treats large totals. */
export interface LargeCountPolicy {
  /** Totals of at least this many rows are large. */
  minTotal: number;
  /** A large total is served this long, across writes to its table. */
  ttlMs: number;
}

/**
 * A CountCache with entries valid for `ttlMs`, timed by `now`, and large totals per `large`
 * (default LARGE_COUNT_MIN rows, LARGE_COUNT_TTL_MS). `ttlMs` 0 caches nothing, large or not.
 */
export function createCountCache(
  ttlMs: number,
  now: () => number = Date.now,
  large: LargeCountPolicy = { minTotal: LARGE_COUNT_MIN, ttlMs: LARGE_COUNT_TTL_MS },
): CountCache {
  const generations = new Map<string, number>();
  const entries = new Map<
    string,
    { generation: number; epoch: number; expires: number; total: bigint; large: boolean }
  >();
  // Added to every table's generation: bumping it invalidates all of them at once.
  let epoch = 0;
  const generation = (table: string) => epoch + (generations.get(table) ?? 0);
  return {
    generation,
    get(table, key) {
      if (ttlMs <= 0) return undefined;
      const entry = entries.get(`${table}\u0000${key}`);
      if (entry === undefined) return undefined;
      const current = entry.large ? entry.epoch === epoch : entry.generation === generation(table);
      if (!current || entry.expires <= now()) {
        entries.delete(`${table}\u0000${key}`);
        return undefined;
      }
      return entry.total;
    },
    set(table, key, counted, total) {
      if (ttlMs <= 0 || counted !== generation(table)) return;
      const isLarge = total >= BigInt(large.minTotal);
      setBounded(
        entries,
        `${table}\u0000${key}`,
        {
          generation: counted,
          epoch,
          expires: now() + (isLarge ? Math.max(ttlMs, large.ttlMs) : ttlMs),
          total,
          large: isLarge,
        },
        MAX_ENTRIES,
      );
    },
    invalidate(tables) {
      for (const table of tables) generations.set(table, (generations.get(table) ?? 0) + 1);
    },
    invalidateAll() {
      epoch++;
    },
  };
}
