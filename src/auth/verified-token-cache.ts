/**
 * A bounded map from a token string to what verifying it produced, each entry valid until its own
 * expiry time. When full, expired entries are dropped first, then the oldest tenth.
 */
export interface VerifiedTokenCache<V> {
  /** The value for `token` when present and `expiresAt` > `now`; an expired entry is removed. */
  get(token: string, now: number): V | undefined;
  /** Remembers `value` for `token` until `expiresAt` (ms); ignored when `expiresAt` <= `now`. */
  set(token: string, value: V, expiresAt: number, now: number): void;
  readonly size: number;
}

/** Creates a cache holding at most `maxEntries` tokens. */
export function createVerifiedTokenCache<V>(maxEntries: number): VerifiedTokenCache<V> {
  const entries = new Map<string, { value: V; expiresAt: number }>();

  function makeRoom(now: number): void {
    for (const [token, e] of entries) if (e.expiresAt <= now) entries.delete(token);
    // Evicting a batch keeps the sweep above from running on every insert while the cache is full.
    const target = Math.floor(maxEntries * 0.9);
    for (const token of entries.keys()) {
      if (entries.size <= target) break;
      entries.delete(token);
    }
  }

  return {
    get(token, now) {
      const e = entries.get(token);
      if (!e) return undefined;
      if (e.expiresAt > now) return e.value;
      entries.delete(token);
      return undefined;
    },
    set(token, value, expiresAt, now) {
      if (expiresAt <= now) return;
      if (!entries.has(token) && entries.size >= maxEntries) makeRoom(now);
      entries.set(token, { value, expiresAt });
    },
    get size() {
      return entries.size;
    },
  };
}
