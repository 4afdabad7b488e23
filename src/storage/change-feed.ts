/**
 * What one committed write changed: the tables it wrote. `everything` means changes may have been
 * missed (the listening connection dropped and came back): every cached value is suspect.
 */
export interface ChangeBatch {
  readonly tables: readonly string[];
  readonly everything: boolean;
}

/**
 * The changes committed to the metadata store by any process on the same database, this one's
 * included: a cache subscribes and drops what a batch touches. On PostgreSQL, other processes'
 * changes arrive through LISTEN/NOTIFY (sent inside the writing transaction, so delivered exactly
 * on commit); on SQLite (one serving process per file) only this process's own.
 */
export interface ChangeFeed {
  /**
   * Calls `listener` synchronously for every batch from now on, after the batch's commit. A throw
   * from a listener is reported by the feed and does not stop the others. Returns the unsubscribe.
   */
  subscribe(listener: (batch: ChangeBatch) => void): () => void;
}

/** A change feed that the store publishes into. */
export interface ChangeHub extends ChangeFeed {
  /** Hands `batch` to every listener (in subscription order). */
  publish(batch: ChangeBatch): void;
}

/** Creates an in-process hub; `onError` receives what a listener throws (default: ignored). */
export function createChangeHub(onError: (err: unknown) => void = () => {}): ChangeHub {
  const listeners = new Set<(batch: ChangeBatch) => void>();
  return {
    subscribe(listener) {
      const own = (batch: ChangeBatch) => listener(batch);
      listeners.add(own);
      return () => listeners.delete(own);
    },
    publish(batch) {
      for (const listener of listeners) {
        try {
          listener(batch);
        } catch (err) {
          onError(err);
        }
      }
    },
  };
}

/** True when `batch` may have changed one of `tables` (it wrote one, or it says `everything`). */
export function touches(batch: ChangeBatch, tables: readonly string[]): boolean {
  return batch.everything || batch.tables.some((t) => tables.includes(t));
}
