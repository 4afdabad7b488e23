import type { Clock } from "../core/clock.js";
import { selfAndAncestors } from "../core/uidp.js";
import type { TagPull } from "../storage/retention-store.js";
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
  /** How often the coalesced pull times of tags are written (ms; rounded up to whole `flushMs`). */
  pullTimesFlushMs: number;
  /** Distinct (repo, tag or digest) pull times kept between writes; more are dropped and counted. */
  maxPullTimes: number;
}

export const DEFAULT_PULL_EVENT_OPTIONS: PullEventOptions = {
  flushMs: 250,
  maxPerFlush: 10_000,
  subscribedTtlMs: 1_000,
  pullTimesFlushMs: 5_000,
  maxPullTimes: 100_000,
};

/**
 * Pull events, batched: a manifest GET only queues its event (no database write on the pull path),
 * and every `flushMs` the queue is written in one transaction. Pulls of repos under no subscribed
 * group are not even queued (the list of subscribed groups is refreshed every `subscribedTtlMs`, so
 * a new subscription sees pulls from then on). Unlike changes, pulls are not durable: the events of
 * the last interval are lost if the process dies.
 *
 * The same buffer coalesces the pull times retention reads (ADR 0046): `pulled` keeps only the
 * newest time per (repo, tag) or (repo, digest) in memory, and every `pullTimesFlushMs` (and on
 * `flush`/`close`) they are written in one transaction with the queued events, so a pull costs no
 * write of its own. A crash loses at most that interval's pull times.
 */
export interface PullEventBuffer {
  /** Queues the pull built by `build` when a subscription may want pulls of `groupUid`; never waits or throws. */
  add(groupUid: string, build: () => RegistryChange): void;
  /** Notes a pull of a tag (by name, or every tag pointing at the digest) for retention; never waits or throws. */
  pulled(pull: TagPull): void;
  /** Writes what is queued now. */
  flush(): Promise<void>;
  /** Stops the timer and writes what is queued. */
  close(): Promise<void>;
}

export function startPullEventBuffer(deps: {
  store: Pick<Store, "subscriptions" | "retention" | "transaction">;
  recorder: EventRecorder;
  clock: Clock;
  logger: (line: object) => void;
  options?: Partial<PullEventOptions>;
}): PullEventBuffer {
  const options = { ...DEFAULT_PULL_EVENT_OPTIONS, ...deps.options };
  let queue: RegistryChange[] = [];
  let dropped = 0;
  let pulls = new Map<string, TagPull>();
  let pullsDropped = 0;
  const ticksPerPullWrite = Math.max(1, Math.ceil(options.pullTimesFlushMs / options.flushMs));
  let ticks = 0;
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

  async function write(withPulls: boolean) {
    const batch = queue;
    const lost = dropped;
    queue = [];
    dropped = 0;
    if (lost > 0) deps.logger({ level: "warn", msg: "pull events dropped under load", dropped: lost });
    const pullBatch = withPulls ? [...pulls.values()] : [];
    if (withPulls) {
      if (pullsDropped > 0)
        deps.logger({ level: "warn", msg: "pull times dropped under load", dropped: pullsDropped });
      pulls = new Map();
      pullsDropped = 0;
    }
    if (batch.length === 0 && pullBatch.length === 0) return;
    try {
      await deps.store.transaction(async (tx) => {
        for (const change of batch) await deps.recorder.registry(tx, change);
        await tx.retention.recordPulls(pullBatch);
      });
    } catch (err) {
      deps.logger({
        level: "error",
        msg: "pull events could not be written",
        events: batch.length,
        pullTimes: pullBatch.length,
        error: String(err),
      });
    }
  }

  const flushWith = (withPulls: boolean) => {
    flushing = flushing.then(() => write(withPulls));
    return flushing;
  };
  const flush = () => flushWith(true);

  const timer = setInterval(() => {
    if (deps.clock.now() - subscribedAt >= options.subscribedTtlMs) void refreshSubscribed();
    ticks = (ticks + 1) % ticksPerPullWrite;
    const pullsDue = ticks === 0 && (pulls.size > 0 || pullsDropped > 0);
    if (queue.length > 0 || dropped > 0 || pullsDue) void flushWith(pullsDue);
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
    pulled(pull) {
      const key = "tag" in pull ? `${pull.repoUid}\0t\0${pull.tag}` : `${pull.repoUid}\0d\0${pull.digest}`;
      const known = pulls.get(key);
      if (known !== undefined) {
        if (pull.time > known.time) pulls.set(key, pull);
        return;
      }
      if (pulls.size >= options.maxPullTimes) {
        pullsDropped++;
        return;
      }
      pulls.set(key, pull);
    },
    flush,
    async close() {
      clearInterval(timer);
      await refreshing;
      await flush();
    },
  };
}
