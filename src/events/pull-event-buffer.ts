import type { Clock } from "../core/clock.js";
import { selfAndAncestors } from "../core/uidp.js";
import type { Store } from "../storage/store.js";
import type { EventRecorder, RegistryChange } from "./event-recorder.js";

/** Batching of pull events (ADR 0012). */
export interface PullEventOptions {
  /** How often queued pulls are written (ms). */
  flushMs: number;
  /** Pulls kept per flush interval; more are dropped and counted in a log line. */
  maxPerFlush: number;
  /** How long the list of subscribed groups is trusted (ms). */
  subscribedTtlMs: number;
}

export const DEFAULT_PULL_EVENT_OPTIONS: PullEventOptions = {
  flushMs: 250,
  maxPerFlush: 10_000,
  subscribedTtlMs: 1_000,
};

/**
 * Pull events, batched: a manifest GET only queues its event (no database write on the pull path),
 * and every `flushMs` the queue is written in one transaction. Pulls of repos under no subscribed
 * group are not even queued (the list of subscribed groups is refreshed every `subscribedTtlMs`, so
 * a new subscription sees pulls from then on). Unlike changes, pulls are not durable: the events of
 * the last interval are lost if the process dies.
 */
export interface PullEventBuffer {
  /** Queues the pull built by `build` when a subscription may want pulls of `groupUid`; never waits or throws. */
  add(groupUid: string, build: () => RegistryChange): void;
  /** Writes what is queued now. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is queued. */
  close(): Promise<void>;
}

export function startPullEventBuffer(deps: {
  store: Pick<Store, "subscriptions" | "transaction">;
  recorder: EventRecorder;
  clock: Clock;
  logger: (line: object) => void;
  options?: Partial<PullEventOptions>;
}): PullEventBuffer {
  const options = { ...DEFAULT_PULL_EVENT_OPTIONS, ...deps.options };
  let queue: RegistryChange[] = [];
  let dropped = 0;
  let subscribed = new Set<string>();
  let subscribedAt = Number.NEGATIVE_INFINITY;
  let refreshing: Promise<void> | undefined;
  let flushing: Promise<void> = Promise.resolve();

  const refreshSubscribed = () => {
    refreshing ??= deps.store.subscriptions
      .subscribedGroups()
      .then((groups) => {
        subscribed = new Set(groups);
        subscribedAt = deps.clock.now();
      })
      .catch((err) =>
        deps.logger({ level: "error", msg: "pull events: could not read subscriptions", error: String(err) }),
      )
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  };

  const wanted = (groupUid: string) =>
    subscribed.size > 0 && selfAndAncestors(groupUid).some((uid) => subscribed.has(uid));

  async function write() {
    const batch = queue;
    const lost = dropped;
    queue = [];
    dropped = 0;
    if (lost > 0) deps.logger({ level: "warn", msg: "pull events dropped under load", dropped: lost });
    if (batch.length === 0) return;
    try {
      await deps.store.transaction(async (tx) => {
        for (const change of batch) await deps.recorder.registry(tx, change);
      });
    } catch (err) {
      deps.logger({
        level: "error",
        msg: "pull events could not be written",
        events: batch.length,
        error: String(err),
      });
    }
  }

  const flush = () => {
    flushing = flushing.then(write);
    return flushing;
  };

  const timer = setInterval(() => {
    if (deps.clock.now() - subscribedAt >= options.subscribedTtlMs) void refreshSubscribed();
    if (queue.length > 0 || dropped > 0) void flush();
  }, options.flushMs);
  timer.unref();
  void refreshSubscribed();

  return {
    add(groupUid, build) {
      if (!wanted(groupUid)) return;
      if (queue.length >= options.maxPerFlush) {
        dropped++;
        return;
      }
      queue.push(build());
    },
    flush,
    async close() {
      clearInterval(timer);
      await refreshing;
      await flush();
    },
  };
}
