import type { DescMessage } from "@bufbuild/protobuf";
import type { Store } from "../storage/store.js";
import type { ApiChange, ChangeContext, EventRecorder } from "./event-recorder.js";

/** What a recorded mutation runs on (every service's deps hold both). */
export interface MutationDeps {
  /** Only its `transaction` is used: the write and the event run on the transaction's `tx`. */
  store: Pick<Store, "transaction">;
  events: EventRecorder;
}

/**
 * The event of a mutation: known before the write, or read from what the write returned
 * (undefined when the write changed nothing, such as an idempotent delete of a missing row: then
 * nothing is recorded).
 */
export type RecordedChange<T, D extends DescMessage> =
  | ApiChange<D>
  | ((written: T) => ApiChange<D> | undefined);

/**
 * Runs `write` and then records the change it made, in one transaction of `deps.store`: the event
 * (and, on an audited API call, the call's audit record: ADR 0048) commits with the write or not at all, and a throw from either rolls both back and rethrows.
 * The transaction takes `ctx.signal` (a request's): once it fired, it rolls back with its reason
 * instead of committing (see `Store.transaction`). Resolves with what `write` returned.
 */
export function recordedMutation<T, D extends DescMessage>(
  deps: MutationDeps,
  ctx: ChangeContext,
  write: (tx: Store) => Promise<T>,
  change: RecordedChange<T, D>,
): Promise<T> {
  const audit = ctx.audit;
  const auditedBefore = audit?.recorded;
  const done = deps.store.transaction(async (tx) => {
    const written = await write(tx);
    const recorded = typeof change === "function" ? change(written) : change;
    if (recorded !== undefined) await deps.events.change(tx, ctx, recorded);
    return written;
  }, ctx.signal);
  if (audit === undefined || auditedBefore) return done;
  // A rolled-back audit record was never written: the call's outcome still needs one.
  return done.catch((err: unknown) => {
    audit.recorded = false;
    throw err;
  });
}
