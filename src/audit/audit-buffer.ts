import type { AuditRow } from "../storage/audit-store.js";
import type { Store } from "../storage/store.js";

/** Batching of the records written off the request path (ADR 0048). */
export interface AuditBufferOptions {
  /** How often queued records are written (ms). */
  flushMs: number;
  /** Records kept per flush interval; more are dropped and counted in a log line. */
  maxPerFlush: number;
}

export const DEFAULT_AUDIT_BUFFER_OPTIONS: AuditBufferOptions = { flushMs: 250, maxPerFlush: 10_000 };

/** A queued record whose group is found at flush time (a refused request names only a path). */
export interface PendingAudit {
  row: AuditRow;
  /** Called at flush time when set: the group of the record (its repo's, or the deepest existing group). */
  groupOf?: (() => Promise<string>) | undefined;
}

/**
 * Records written in batches: `add` only queues (no database work on the request path), and every
 * `flushMs` the queue is written in one transaction. Like pull events, the records of the last
 * interval are lost if the process dies: used for pulls and refused registry requests, whose
 * answers commit nothing.
 */
export interface AuditBuffer {
  /** Queues one record; never waits or throws. */
  add(pending: PendingAudit): void;
  /** Writes what is queued now. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is queued. */
  close(): Promise<void>;
}

export function startAuditBuffer(deps: {
  store: Pick<Store, "transaction">;
  logger: (line: object) => void;
  options?: Partial<AuditBufferOptions> | undefined;
}): AuditBuffer {
  const options = { ...DEFAULT_AUDIT_BUFFER_OPTIONS, ...deps.options };
  let queue: PendingAudit[] = [];
  let dropped = 0;
  let flushing: Promise<void> = Promise.resolve();

  async function write() {
    const batch = queue;
    const lost = dropped;
    queue = [];
    dropped = 0;
    if (lost > 0) deps.logger({ level: "warn", msg: "audit records dropped under load", dropped: lost });
    if (batch.length === 0) return;
    try {
      const rows: AuditRow[] = [];
      for (const pending of batch) {
        if (pending.groupOf === undefined) rows.push(pending.row);
        else rows.push({ ...pending.row, groupUid: await pending.groupOf().catch(() => "") });
      }
      await deps.store.transaction((tx) => tx.audit.append(rows));
    } catch (err) {
      deps.logger({
        level: "error",
        msg: "audit records could not be written",
        records: batch.length,
        error: String(err),
      });
    }
  }

  const flush = () => {
    flushing = flushing.then(write);
    return flushing;
  };

  const timer = setInterval(() => {
    if (queue.length > 0 || dropped > 0) void flush();
  }, options.flushMs);
  timer.unref();

  return {
    add(pending) {
      if (queue.length >= options.maxPerFlush) {
        dropped++;
        return;
      }
      queue.push(pending);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
