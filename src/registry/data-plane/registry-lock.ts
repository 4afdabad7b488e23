import type { Store } from "../../storage/store.js";

/**
 * How a transaction holds the registry lock: `shared` for every write that makes content reachable
 * (a blob commit or mount, a manifest commit, a tag write, a stored vulnerability report), which may
 * run side by side; `exclusive` for a garbage-collection deletion, which runs alone. So a deletion
 * never interleaves with a push: a push lands before it (and keeps what it references) or after it
 * (and finds the content gone).
 */
export type RegistryLockMode = "shared" | "exclusive";

/**
 * Takes the registry lock in `mode` for the rest of transaction `tx` (it is released when `tx`
 * ends). The one owner of the lock: every module that takes it calls this, never the store's
 * `garbage.lockRegistry` directly. PostgreSQL: a transaction-scoped advisory lock; SQLite: nothing
 * (its transactions already hold the database write lock). Throws outside a transaction.
 */
export function withRegistryLock(tx: Store, mode: RegistryLockMode): Promise<void> {
  return tx.garbage.lockRegistry(mode);
}

/** Runs `fn` in a new transaction of `store` that first takes the registry lock in `mode`. */
export function inRegistryLock<T>(
  store: Store,
  mode: RegistryLockMode,
  fn: (tx: Store) => Promise<T>,
): Promise<T> {
  return store.transaction(async (tx) => {
    await withRegistryLock(tx, mode);
    return fn(tx);
  });
}
