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

/** A CountCache with entries valid for `ttlMs`, timed by `now`. */
export function createCountCache(ttlMs: number, now: () => number = Date.now): CountCache {
  const generations = new Map<string, number>();
  const entries = new Map<string, { generation: number; expires: number; total: bigint }>();
  // Added to every table's generation: bumping it invalidates all of them at once.
  let epoch = 0;
  const generation = (table: string) => epoch + (generations.get(table) ?? 0);
  return {
    generation,
    get(table, key) {
      if (ttlMs <= 0) return undefined;
      const entry = entries.get(`${table}\u0000${key}`);
      if (entry === undefined) return undefined;
      if (entry.generation !== generation(table) || entry.expires <= now()) {
        entries.delete(`${table}\u0000${key}`);
        return undefined;
      }
      return entry.total;
    },
    set(table, key, counted, total) {
      if (ttlMs <= 0 || counted !== generation(table)) return;
      setBounded(
        entries,
        `${table}\u0000${key}`,
        { generation: counted, expires: now() + ttlMs, total },
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
