import type { Clock } from "../core/clock.js";
import type { Store } from "../storage/store.js";

/** How the retention job runs (ADR 0048). */
export interface AuditRetentionOptions {
  /** How often old records are pruned (ms). */
  intervalMs: number;
  /** Records deleted per statement (a long prune is many short transactions). */
  batch: number;
}

export const DEFAULT_AUDIT_RETENTION_OPTIONS: AuditRetentionOptions = {
  intervalMs: 3_600_000,
  batch: 10_000,
};

/** The background prune of audit records older than the retention. */
export interface AuditRetention {
  /** Prunes now; resolves with how many records were deleted. */
  run(): Promise<number>;
  /** Stops the timer and waits for a running prune. */
  close(): Promise<void>;
}

/**
 * Deletes records older than `retentionMs` (by `clock`) every `intervalMs`, starting once at
 * start-up, in batches of `batch`. Every replica runs it: a DELETE of rows older than a cutoff is
 * idempotent, so replicas need no coordination beyond the database's row locks (two replicas at
 * once delete each row once between them). Failures are logged and retried at the next interval.
 */
export function startAuditRetention(deps: {
  store: Pick<Store, "audit">;
  clock: Clock;
  retentionMs: number;
  logger: (line: object) => void;
  options?: Partial<AuditRetentionOptions> | undefined;
}): AuditRetention {
  const options = { ...DEFAULT_AUDIT_RETENTION_OPTIONS, ...deps.options };
  let running: Promise<number> | undefined;
  const prune = async (): Promise<number> => {
    const cutoff = deps.clock.now() - deps.retentionMs;
    let total = 0;
    for (;;) {
      const deleted = await deps.store.audit.pruneBefore(cutoff, options.batch);
      total += deleted;
      if (deleted < options.batch) break;
    }
    if (total > 0) deps.logger({ level: "info", msg: "audit records pruned", records: total });
    return total;
  };
  const run = () => {
    running ??= prune()
      .catch((err: unknown) => {
        deps.logger({ level: "error", msg: "audit retention failed", error: String(err) });
        return 0;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const timer = setInterval(() => void run(), options.intervalMs);
  timer.unref();
  void run();
  return {
    run,
    async close() {
      clearInterval(timer);
      await running;
    },
  };
}
