import type { Clock } from "../../core/clock.js";
import type { RetentionDeps } from "./retention-deps.js";
import { runPolicy } from "./retention-run.js";

/** How often the scheduler looks for due policies by default (ms). */
export const DEFAULT_RETENTION_POLL_MS = 15_000;
/** Most due policies one poll takes on. */
const DUE_PER_POLL = 20;

/** The running scheduler. */
export interface RetentionScheduler {
  /** Stops polling and waits for the run in progress, if any (the poll's other due policies wait). */
  close(): Promise<void>;
}

/**
 * Runs scheduled retention policies: every `pollMs` it reads the policies due and runs each one it
 * can claim (runPolicy with `scheduled`: the claim is a conditional UPDATE in the database, so of
 * several processes polling the same database exactly one runs a due policy, and its next run
 * time moves one interval on). One poll at a time per process; runs are by the system (no
 * principal). Each run, and each failure, is a log line.
 */
export function startRetentionScheduler(
  deps: RetentionDeps,
  options: { clock: Clock; logger: (line: object) => void; pollMs?: number },
): RetentionScheduler {
  const { clock, logger } = options;
  const ctx = { principal: undefined, clock };
  let running: Promise<void> = Promise.resolve();
  let polling = false;
  let closed = false;

  const poll = async () => {
    const due = await deps.store.retention.due(clock.now(), DUE_PER_POLL);
    for (const uid of due) {
      if (closed) return; // shutting down: the rest stay due for the next poll, here or elsewhere
      try {
        const outcome = await runPolicy(deps, ctx, uid, true);
        if (outcome) {
          logger({
            msg: "retention run",
            event: "retention",
            policy: uid,
            run: outcome.summary.uid,
            scheduled: true,
            deletedTags: outcome.summary.deletedTags,
          });
        }
      } catch (err) {
        logger({
          level: "error",
          msg: "retention run failed",
          event: "retention",
          policy: uid,
          error: String(err),
        });
      }
    }
  };

  const timer = setInterval(() => {
    if (polling) return;
    polling = true;
    running = poll()
      .catch((err) =>
        logger({
          level: "error",
          msg: "retention: could not read due policies",
          event: "retention",
          error: String(err),
        }),
      )
      .finally(() => {
        polling = false;
      });
  }, options.pollMs ?? DEFAULT_RETENTION_POLL_MS);
  timer.unref();

  return {
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}
