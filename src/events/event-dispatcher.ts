import { randomUUID } from "node:crypto";
import type { DeliverySigner } from "../auth/delivery-signer.js";
import type { Clock } from "../core/clock.js";
import { tracedCall } from "../core/tracing.js";
import type { EventOutboxStore, LeasedLane, PendingDelivery } from "../storage/event-store.js";
import { createDeliveryHeaders } from "./delivery-headers.js";
import { localHostIdentity, processExists } from "./local-process.js";
import type { WebhookSender } from "./webhook-sender.js";

/** Delivery tunables; see EventsConfig for the user-facing ones. */
export interface DispatcherOptions {
  /** Attempts per delivery before it is marked failed (dead letter). */
  maxAttempts: number;
  /** Time limit of one attempt (ms). */
  timeoutMs: number;
  /**
   * Lease of a lane (ms): the longest a lane stays with one owner per lease round, and how long
   * the lanes of an owner that never heart-beat (an older version) wait before others take them.
   */
  leaseMs: number;
  /** How often this dispatcher records that it is alive (ms). */
  heartbeatMs: number;
  /**
   * An owner whose last heartbeat is older than this (ms) is dead: others take its lanes. This
   * dispatcher stops delivering (and aborts the sends in flight) once its own last recorded
   * heartbeat is `ownerStaleMs - heartbeatMs` old, before anyone may take its lanes.
   */
  ownerStaleMs: number;
  /** Lanes (subscriptions) delivered to concurrently by this process. */
  concurrency: number;
  /** Deliveries sent per lane lease. */
  batchSize: number;
  /** First retry delay (ms); doubles per attempt up to `backoffMaxMs`, with jitter. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** How often an idle dispatcher looks for work another process may have written (ms). */
  pollMs: number;
  /**
   * Pokes (one per committed write with subscribers) and lanes that caught up start at most one
   * lease round per this many ms; a lane that delivered a full batch starts one at once. So under a
   * steady write load a lane sends what this interval gathered in one batch instead of cycling
   * through a lease, a read and a bookkeeping transaction for every event or two (on SQLite ~2.5 ms
   * of database time per cycle, more than the deliveries it served).
   */
  pokeIntervalMs: number;
  /**
   * Delivered events are deleted by a prune at most this often (ms), after a lane moved its
   * cursor: one sweep instead of a delete in every lane's bookkeeping transaction.
   */
  pruneIntervalMs: number;
  /**
   * How long events are kept for redelivery and replay once no subscription owes them (ms;
   * `--events-retention`, ADR 0049). 0 prunes them as soon as they are delivered.
   */
  retentionMs: number;
  /** How often the retention sweep runs even when no lane moved (ms). */
  retentionSweepMs: number;
}

export const DEFAULT_DISPATCHER_OPTIONS: DispatcherOptions = {
  maxAttempts: 20,
  timeoutMs: 10_000,
  leaseMs: 60_000,
  heartbeatMs: 1_000,
  ownerStaleMs: 3_000,
  concurrency: 16,
  batchSize: 100,
  backoffBaseMs: 1_000,
  backoffMaxMs: 10 * 60_000,
  pollMs: 500,
  pokeIntervalMs: 50,
  pruneIntervalMs: 1_000,
  retentionMs: 30 * 24 * 3600_000,
  retentionSweepMs: 60_000,
};

/** Heartbeats between two sweeps of owners long dead. */
const FORGET_EVERY_BEATS = 60;
/** Heartbeats between two looks for dead dispatchers on this host (the first heartbeat looks). */
const NEIGHBOUR_CHECK_EVERY_BEATS = 5;

/** How a lane's run ended (see runLane). */
type LaneRunEnd = "more" | "progress" | "idle";

/** One line per failed attempt or dead letter, for the server log (never the body or token). */
export type DispatcherLogger = (line: object) => void;

export interface EventDispatcher {
  /** Looks for work soon (call after committing events: within `pokeIntervalMs`) instead of at the next poll. */
  poke(): void;
  /** Stops leasing new lanes and waits for the batches in flight to finish. */
  close(): Promise<void>;
}

/**
 * `min(max, base · 2^(attempt-1))`, scaled by a random factor in [0.5, 1) ("equal jitter"), so
 * sinks that failed together do not retry together.
 */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number, random = Math.random): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt - 1, 30));
  return Math.round(ceiling * (0.5 + random() / 2));
}

/**
 * Delivers the outbox. Each process leases lanes (one per subscription with work), so a lane is
 * served by one worker at a time and its events go out in outbox order; a batch ends at the first
 * failed attempt, which backs the lane off (capped exponential, jittered) or, after `maxAttempts`,
 * marks the delivery failed and moves on. Delivered rows are deleted after the batch, so a crash
 * mid-batch re-sends at most that batch (at-least-once: receivers dedupe on `ce-id`).
 *
 * Liveness (ADR 0037): the dispatcher records a heartbeat every `heartbeatMs` and leases only
 * once one is recorded; others take the lanes of an owner whose heartbeat is `ownerStaleMs` old,
 * so a killed process's lanes move within seconds, not at the end of their lease. A dispatcher
 * whose heartbeats stop being recorded (its database is unreachable) stops sending, aborting what
 * is in flight, `heartbeatMs` before others may consider it dead: two live processes never send
 * on one lane at once (given clocks that agree within `heartbeatMs`). Its own liveness is timed
 * on the monotonic clock; times written and compared in the database come from `clock`.
 */
export function startEventDispatcher(deps: {
  events: EventOutboxStore;
  sign: DeliverySigner;
  send: WebhookSender;
  clock: Clock;
  logger: DispatcherLogger;
  options?: Partial<DispatcherOptions>;
}): EventDispatcher {
  const options = { ...DEFAULT_DISPATCHER_OPTIONS, ...deps.options };
  const owner = randomUUID();
  const local = localHostIdentity();
  const identity = { host: local.host, pid: process.pid, startTime: deps.clock.now() };
  let running = true;
  let inFlight = 0;
  let wake: (() => void) | undefined;
  let pokedWhileBusy = false;
  /** performance.now() when the last lease round started, and the timer of a deferred poke. */
  let lastRound = Number.NEGATIVE_INFINITY;
  let deferredPoke: NodeJS.Timeout | undefined;
  const lanes = new Set<Promise<void>>();
  /** The pending prune's timer, when the last one started, and the one running. */
  let pruneTimer: NodeJS.Timeout | undefined;
  let lastPrune = Number.NEGATIVE_INFINITY;
  let pruning: Promise<void> = Promise.resolve();

  /** Prunes delivered events within `pruneIntervalMs` (one prune for every lane that moved meanwhile). */
  const schedulePrune = () => {
    if (pruneTimer || !running) return;
    const wait = Math.max(0, lastPrune + options.pruneIntervalMs - performance.now());
    pruneTimer = setTimeout(() => {
      pruneTimer = undefined;
      lastPrune = performance.now();
      pruning = deps.events.prune({ before: deps.clock.now() - options.retentionMs }).then(
        () => {},
        (err) => deps.logger({ level: "error", msg: "event prune failed", error: String(err) }),
      );
    }, wait);
  };
  // Events age out of the retention without any lane moving: sweep now and then as well.
  const sweepTimer = setInterval(schedulePrune, options.retentionSweepMs);
  sweepTimer.unref();

  /** Starts a lease round as soon as the loop is free. */
  const wakeNow = () => {
    pokedWhileBusy = true;
    wake?.();
  };
  const poke = () => {
    const wait = lastRound + options.pokeIntervalMs - performance.now();
    if (wait <= 0) wakeNow();
    else
      deferredPoke ??= setTimeout(() => {
        deferredPoke = undefined;
        wakeNow();
      }, wait);
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        wake = undefined;
        resolve();
      }
      wake = done;
    });

  /**
   * performance.now() until which this dispatcher may send: its last recorded heartbeat's start
   * plus `ownerStaleMs - heartbeatMs`. `liveness` aborts the sends in flight when it passes.
   */
  let liveUntil = Number.NEGATIVE_INFINITY;
  let liveness = new AbortController();
  let livenessTimer: NodeJS.Timeout | undefined;
  let heartbeatTimer: NodeJS.Timeout | undefined;
  let beating: Promise<void> = Promise.resolve();
  let beats = 0;
  let heartbeatFailing = false;
  const alive = () => performance.now() < liveUntil;

  const livenessLost = () => {
    liveness.abort();
    liveness = new AbortController();
    deps.logger({ msg: "event dispatcher heartbeat not recorded in time; not delivering until it is" });
  };

  const beat = async () => {
    const started = performance.now();
    const now = deps.clock.now();
    const forget = beats % FORGET_EVERY_BEATS === 0;
    const forgetDead = local.pidsComparable && beats % NEIGHBOUR_CHECK_EVERY_BEATS === 0;
    beats++;
    try {
      await deps.events.heartbeat({
        owner,
        now,
        ...identity,
        // By then the leases it took while alive have ended (see leaseLanes).
        ...(forget ? { forgetBefore: now - options.leaseMs - options.ownerStaleMs } : {}),
      });
      heartbeatFailing = false;
      if (forgetDead) await markDeadNeighbours(now);
      const wasAlive = alive();
      liveUntil = Math.max(liveUntil, started + options.ownerStaleMs - options.heartbeatMs);
      clearTimeout(livenessTimer);
      livenessTimer = setTimeout(livenessLost, liveUntil - performance.now());
      if (!wasAlive && alive()) wakeNow();
    } catch (err) {
      if (!heartbeatFailing)
        deps.logger({ level: "error", msg: "event dispatcher heartbeat failed", error: String(err) });
      heartbeatFailing = true;
    }
  };
  /**
   * Owners on this host (same PID namespace) whose process is gone died without retiring: a
   * restarted server, or a sibling worker, takes their lanes now rather than after `ownerStaleMs`.
   * A failure here only means the usual wait.
   */
  const markDeadNeighbours = async (now: number) => {
    try {
      const staleAlready = now - options.ownerStaleMs;
      let found = false;
      for (const other of await deps.events.owners()) {
        if (other.host !== local.host || other.pid === process.pid) continue;
        if (other.heartbeatTime < staleAlready || processExists(other.pid)) continue;
        await deps.events.markOwnerDead(other.owner, staleAlready - 1);
        deps.logger({
          msg: "event dispatcher found a dead dispatcher on this host",
          owner: other.owner,
          pid: other.pid,
        });
        found = true;
      }
      if (found) wakeNow();
    } catch (err) {
      deps.logger({
        msg: "event dispatcher could not check this host's other dispatchers",
        error: String(err),
      });
    }
  };
  const heartbeats = () => {
    beating = beat().then(() => {
      if (running) heartbeatTimer = setTimeout(heartbeats, options.heartbeatMs);
    });
  };
  heartbeats();

  const headersOf = createDeliveryHeaders({ sign: deps.sign, clock: deps.clock });

  /**
   * One attempt, in a `webhook.deliver` client span continuing the trace the event was recorded in
   * (its `traceparent` extension); the request carries the span's `traceparent` (ADR 0042).
   */
  async function deliver(lane: LeasedLane, delivery: PendingDelivery, signal: AbortSignal) {
    const headers = await headersOf(lane.groupUid, delivery.event);
    const attributes = {
      "cloudevents.event_id": delivery.event.id,
      "cloudevents.event_type": delivery.event.type,
      "wharf.subscription_uid": lane.subscriptionUid,
      "wharf.delivery_attempt": delivery.attempts + 1,
    };
    return tracedCall(
      "webhook.deliver",
      delivery.event.extensions.traceparent,
      attributes,
      (traceparent) =>
        deps.send(
          lane.sink,
          traceparent === headers.traceparent ? headers : { ...headers, traceparent: traceparent as string },
          delivery.event.data,
          options.timeoutMs,
          signal,
        ),
      (result) => (result.ok ? undefined : result.error || `HTTP ${result.status}`),
    );
  }

  /**
   * Sends what the lane owes. "more": it stopped with more to send at once (a full batch, a batch
   * cut short by the lease, or a dead letter it moved past); "progress": it attempted something
   * and now owes nothing or backs off; "idle": nothing was attempted.
   */
  async function runLane(lane: LeasedLane): Promise<LaneRunEnd> {
    let fetched = 0;
    const delivered: number[] = [];
    const redelivered: { uid: string; status: number }[] = [];
    let failure: Parameters<EventOutboxStore["finish"]>[0]["failure"];
    try {
      const batch = await deps.events.pending(lane.subscriptionUid, options.batchSize);
      fetched = batch.length;
      for (const delivery of batch) {
        if (!running || !alive() || deps.clock.now() + options.timeoutMs > lane.leaseUntil) break;
        const signal = liveness.signal;
        const result = await deliver(lane, delivery, signal);
        // Not a failure of the sink: this process may have lost the lane.
        if (signal.aborted) break;
        if (result.ok) {
          if (delivery.redelivery === undefined) delivered.push(delivery.id);
          else redelivered.push({ uid: delivery.redelivery, status: result.status });
          continue;
        }
        const attempts = delivery.attempts + 1;
        const dead = attempts >= options.maxAttempts;
        failure = {
          deliveryId: delivery.id,
          ...(delivery.redelivery === undefined ? {} : { redelivery: delivery.redelivery }),
          attempts,
          status: result.status,
          error: result.error,
          dead,
          retryTime: deps.clock.now() + backoffDelay(attempts, options.backoffBaseMs, options.backoffMaxMs),
        };
        deps.logger({
          level: "warn",
          msg: dead ? "event delivery failed for good" : "event delivery failed",
          subscription: lane.subscriptionUid,
          event: delivery.event.id,
          type: delivery.event.type,
          ...(delivery.redelivery === undefined ? {} : { redelivery: delivery.redelivery }),
          attempts,
          status: result.status,
          error: result.error,
        });
        break;
      }
    } catch (err) {
      deps.logger({
        level: "error",
        msg: "event delivery error",
        subscription: lane.subscriptionUid,
        error: String(err),
      });
    }
    try {
      await deps.events.finish({
        subscriptionUid: lane.subscriptionUid,
        owner,
        delivered,
        redelivered,
        failure,
        now: deps.clock.now(),
      });
    } catch (err) {
      // The lease runs out and the batch is sent again: at-least-once.
      deps.logger({
        msg: "event delivery bookkeeping failed",
        subscription: lane.subscriptionUid,
        error: String(err),
      });
    }
    if (failure) return failure.dead ? "more" : "progress";
    const sent = delivered.length + redelivered.length;
    if (sent === 0) return "idle";
    return fetched === options.batchSize || sent < fetched ? "more" : "progress";
  }

  async function loop() {
    while (running) {
      pokedWhileBusy = false;
      lastRound = performance.now();
      let leased: LeasedLane[] = [];
      const free = options.concurrency - inFlight;
      if (free > 0 && alive()) {
        try {
          const now = deps.clock.now();
          leased = await deps.events.leaseLanes({
            owner,
            now,
            leaseMs: options.leaseMs,
            limit: free,
            staleBefore: now - options.ownerStaleMs,
          });
        } catch (err) {
          if (!running) return;
          deps.logger({ level: "error", msg: "event dispatcher could not lease work", error: String(err) });
        }
      }
      for (const lane of leased) {
        inFlight++;
        const task: Promise<void> = runLane(lane).then(
          (outcome) => {
            inFlight--;
            lanes.delete(task);
            // Idle (e.g. stopping): the next poll retries; poking would spin.
            if (outcome !== "idle") schedulePrune();
            if (outcome === "more") wakeNow();
            else if (outcome === "progress") poke();
          },
          () => {
            inFlight--;
            lanes.delete(task);
          },
        );
        lanes.add(task);
      }
      if (!running) return;
      // Leased a full round: there may be more work at once. Otherwise wait for a poke or the poll.
      if (leased.length > 0 && leased.length === free) continue;
      if (!pokedWhileBusy) await sleep(options.pollMs);
    }
  }

  const looping = loop();
  return {
    poke,
    async close() {
      running = false;
      clearInterval(sweepTimer);
      clearTimeout(deferredPoke);
      wake?.();
      await looping;
      await Promise.allSettled([...lanes]);
      clearTimeout(pruneTimer);
      await pruning;
      // Its lanes are freed: forget it, rather than have others wait for it to look dead.
      clearTimeout(heartbeatTimer);
      await beating;
      clearTimeout(heartbeatTimer);
      clearTimeout(livenessTimer);
      await deps.events.retireOwner(owner).catch((err) => {
        deps.logger({
          level: "error",
          msg: "event dispatcher could not retire its heartbeat",
          error: String(err),
        });
      });
    },
  };
}
