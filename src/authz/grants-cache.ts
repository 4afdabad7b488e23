import { setBounded } from "../core/bounded-map.js";
import type { Clock } from "../core/clock.js";
import type { Grant, RoleBindingStore } from "../storage/iam-store.js";

/** Per-identity cache of `roleBindings.grantsOf`, valid for a short time. */
export interface GrantsCache {
  /**
   * The identity's grants, at most `ttlMs` old. Concurrent calls for the same identity share one
   * store query. A failed query is not cached.
   */
  grantsOf(identityUid: string): Promise<readonly Grant[]>;
  /** Forgets one identity's grants, or every identity's when `identityUid` is omitted. */
  invalidate(identityUid?: string): void;
}

interface Entry {
  grants: Promise<readonly Grant[]>;
  expires: number;
}

/**
 * Creates a grants cache over `roleBindings`. Entries expire `ttlMs` after their query started
 * (measured with `clock`), so a binding deleted by another process stops counting within `ttlMs`.
 * At most `maxEntries` identities are kept; when full, expired entries are dropped first, then the
 * oldest.
 */
export function createGrantsCache(opts: {
  roleBindings: Pick<RoleBindingStore, "grantsOf">;
  clock: Clock;
  ttlMs: number;
  maxEntries?: number;
}): GrantsCache {
  const { roleBindings, clock, ttlMs } = opts;
  const maxEntries = opts.maxEntries ?? 10_000;
  const entries = new Map<string, Entry>();

  /** When full, drops the expired entries first, so that setBounded evicts live ones only if needed. */
  function dropExpiredWhenFull(now: number): void {
    if (entries.size < maxEntries) return;
    for (const [uid, e] of entries) if (e.expires <= now) entries.delete(uid);
  }

  return {
    grantsOf(identityUid) {
      const now = clock.now();
      const hit = entries.get(identityUid);
      if (hit && hit.expires > now) return hit.grants;
      entries.delete(identityUid);
      dropExpiredWhenFull(now);
      const entry: Entry = { grants: roleBindings.grantsOf(identityUid), expires: now + ttlMs };
      setBounded(entries, identityUid, entry, maxEntries);
      entry.grants.catch(() => {
        if (entries.get(identityUid) === entry) entries.delete(identityUid);
      });
      return entry.grants;
    },
    invalidate(identityUid) {
      if (identityUid === undefined) entries.clear();
      else entries.delete(identityUid);
    },
  };
}
