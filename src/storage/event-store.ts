import type { AccessScopes } from "../core/context.js";
import type { ListSlice, ListWindow, UidpFilter } from "../core/list.js";

/**
 * The events outbox and webhook subscriptions (ADR 0012). An event is appended in the same
 * transaction as the change it reports, once, when some subscription at its group or an ancestor
 * exists. Each subscription keeps a cursor: the events of its subtree after the cursor are its
 * pending deliveries. Delivery workers of any server process lease a subscription's lane, send
 * those events in order, and move the cursor past them; events no cursor still owes are pruned.
 * A delivery's id is its event's `seq`. Times are ms since the epoch.
 */

/** One CloudEvent as the outbox keeps it. */
export interface OutboxEvent {
  /** `ce-id` (a UUID). */
  id: string;
  /** `ce-type`, e.g. `dev.wharf.api.registry.repo.created.v1`. */
  type: string;
  /** `ce-source`. */
  source: string;
  /** `ce-subject`: the uid of the affected resource (the repo for registry events). */
  subject: string;
  /** `ce-group`: the uidp the event belongs to; subscriptions at it or an ancestor receive it. */
  groupUid: string;
  /** `ce-time`. */
  time: number;
  /** Further CloudEvents extension attributes (lower-case names), e.g. `bodytype`, `digest`. */
  extensions: Record<string, string>;
  /** The JSON body `{actor, body}`, exactly the bytes that will be sent and signed. */
  data: string;
}

/** An event to append; `data` may be built only once a subscriber is known to want it. */
export type EventToAppend = Omit<OutboxEvent, "data"> & { data: string | (() => string) };

/** A stored event: the outbox order `seq` is assigned on append. */
export interface StoredEvent extends OutboxEvent {
  seq: number;
}

export interface SubscriptionRow {
  /** `<group uid>/<16 hex>`. */
  uid: string;
  groupUid: string;
  sink: string;
  createTime: number;
}

/** How a subscription's deliveries stand (for the API). */
export interface SubscriptionStatus {
  pending: number;
  failed: number;
  /** When the lane may next try (0: not backing off). */
  retryTime: number;
}

/** How delivery stands across every subscription (for monitoring). */
export interface DeliveryBacklog {
  /** Deliveries owed (an event once per subscription owed it), counted up to the limit asked. */
  pending: number;
  /** Dead letters kept (deliveries given up on). */
  deadLetters: number;
  /** `time` of the oldest event some subscription is still owed; undefined when none is owed. */
  oldestPendingTime: number | undefined;
}

export interface SubscriptionFilter {
  uidp?: UidpFilter;
  within?: AccessScopes;
}

export interface SubscriptionStore {
  get(uid: string): Promise<SubscriptionRow | undefined>;
  /** Orders by uid or create_time (update_time reads as create_time). */
  list(filter: SubscriptionFilter, window: ListWindow): Promise<ListSlice<SubscriptionRow>>;
  insert(row: SubscriptionRow): Promise<void>;
  /** Deletes the subscription, its dead letters and the events only it still owed. */
  delete(uid: string): Promise<boolean>;
  status(uid: string): Promise<SubscriptionStatus>;
  /** The status of each of `uids` that exists, in three queries whatever their number (for a listed page). */
  statuses(uids: readonly string[]): Promise<Map<string, SubscriptionStatus>>;
  /** Subscriptions directly under `groupUid` (a group with subscriptions cannot be deleted). */
  countByGroup(groupUid: string): Promise<number>;
  /** The distinct groups that have at least one subscription. */
  subscribedGroups(): Promise<string[]>;
  /**
   * The backlog of every subscription together. `pending` stops counting at `pendingLimit`, so a
   * large backlog costs at most that many rows; the oldest owed event is found with one index seek
   * per subscription and group range.
   */
  backlog(pendingLimit: number): Promise<DeliveryBacklog>;
}

/** A subscription whose deliveries one worker may send until `leaseUntil`. */
export interface LeasedLane {
  subscriptionUid: string;
  groupUid: string;
  sink: string;
  leaseUntil: number;
}

/** A dispatcher's heartbeat (times in ms since the epoch). */
export interface DispatcherHeartbeat {
  /** Its lease owner id. */
  owner: string;
  now: number;
  /** The host and process it runs in, for operators. */
  host: string;
  pid: number;
  startTime: number;
  /** When given, other owners last heard of before this are deleted. */
  forgetBefore?: number;
}

/** A dispatcher as its last heartbeat described it. */
export interface DispatcherOwner {
  owner: string;
  heartbeatTime: number;
  host: string;
  pid: number;
  startTime: number;
}

/** A delivery still owed, with its event. */
export interface PendingDelivery {
  /** The event's seq. */
  id: number;
  /**
   * Attempts made so far (of the stream's deliveries only the lane's first pending one has any;
   * a redelivery keeps its own).
   */
  attempts: number;
  event: StoredEvent;
  /** Set for a redelivery (ADR 0049): its uid. A lane sends its redeliveries before its stream. */
  redelivery?: string;
}

/** How a delivery stands: owed, given up on (dead letter), or delivered. */
export type DeliveryState = "pending" | "failed" | "delivered";

/** A delivery as the API lists it. */
export interface DeliveryRow {
  /** The event's seq for the stream's deliveries; the row's own seq for redeliveries (list order). */
  id: number;
  /** `<subscription uid>/<16 hex>` (see delivery-uid.ts). */
  uid: string;
  subscriptionUid: string;
  state: DeliveryState;
  /** The uid of the delivery a redelivery sends again ("" for the stream's, and for replays). */
  redeliveryOf: string;
  attempts: number;
  lastAttemptTime: number;
  /** HTTP status of the last attempt; 0 when it got no response. */
  lastStatus: number;
  lastError: string;
  event: StoredEvent;
}

/** What a worker reports when a lane's batch ends. */
export interface LaneOutcome {
  subscriptionUid: string;
  /** The worker's lease owner id; a lane leased to someone else since is left alone. */
  owner: string;
  /**
   * Ids of the deliveries that succeeded: the lane's first pending ones, in order. The cursor
   * moves past the last of them.
   */
  delivered: readonly number[];
  /**
   * The redeliveries that succeeded (the lane's first pending ones, sent before its stream), with
   * the HTTP status each got.
   */
  redelivered?: readonly { uid: string; status: number }[];
  /** The attempt that failed and ended the batch, if any. */
  failure?: {
    deliveryId: number;
    /** Set when the failed delivery is a redelivery: its uid (`deliveryId` is then its event's seq). */
    redelivery?: string;
    attempts: number;
    status: number;
    error: string;
    /** True: give up on this delivery (kept as a dead letter) and go on with the next one. */
    dead: boolean;
    /** When the lane may try again (ignored when `dead`). */
    retryTime: number;
  };
  now: number;
}

export interface EventOutboxStore {
  /**
   * Appends `event` when subscriptions at its group or an ancestor exist, and returns how many
   * there are; when there are none nothing is stored (and a lazy `data` is never built), except a
   * push of an organization with an ON_PUSH replication cursor (ADR 0054), kept for it. The row
   * is written right before the transaction commits, so it is not visible inside it; on
   * PostgreSQL appends of one organization are serialized there, so every subscription sees its
   * events commit in `seq` order (a cursor never passes an event that commits later).
   */
  append(event: EventToAppend): Promise<number>;
  /**
   * Leases up to `limit` lanes (subscriptions with a pending delivery, not backing off at `now`,
   * whose lease is free) to `owner` until `now + leaseMs`. Two workers never hold one lane.
   * With `staleBefore`, a lane is also free when another owner holds it whose last heartbeat
   * (see `heartbeat`) is before `staleBefore`: a dead process's lanes are taken over without
   * waiting for their lease to end. An owner that never heart-beat (or was forgotten) keeps its
   * lanes until then. Never takes a lane from `owner` itself.
   */
  leaseLanes(args: {
    owner: string;
    now: number;
    leaseMs: number;
    limit: number;
    staleBefore?: number;
  }): Promise<LeasedLane[]>;
  /**
   * Records that the dispatcher leasing as `beat.owner` is alive at `beat.now` (creating its row
   * the first time), and forgets other owners whose last heartbeat is before `beat.forgetBefore`
   * (the caller picks a time after which their leases have all ended).
   */
  heartbeat(beat: DispatcherHeartbeat): Promise<void>;
  /** Forgets `owner` (a dispatcher that stopped and freed its lanes). */
  retireOwner(owner: string): Promise<void>;
  /**
   * Records that `owner` is known dead (its process is gone): its last heartbeat moves back to
   * `heardAt` when later, so its lanes read as stale at once while its row is forgotten on the
   * usual schedule. Does nothing for an unknown owner.
   */
  markOwnerDead(owner: string, heardAt: number): Promise<void>;
  /** The running dispatchers, as their heartbeats last recorded them, by owner. */
  owners(): Promise<DispatcherOwner[]>;
  /** The lane's oldest pending deliveries, in event order, at most `limit`. */
  pending(subscriptionUid: string, limit: number): Promise<PendingDelivery[]>;
  /**
   * Records a batch's outcome and frees the lane, atomically: the cursor moves past the
   * delivered events (and past a dead letter); a failure's attempts stay on the subscription.
   * A lane leased to another owner since is left as it is.
   */
  finish(outcome: LaneOutcome): Promise<void>;
  /**
   * Deletes events that no subscription's cursor still owes, no dead letter names and no pending
   * or failed redelivery needs; with `before`, only those whose `time` is before it (the events
   * retention, ADR 0049). Delivered redeliveries and requeued dead letters of a deleted event go
   * with it. Returns how many events were deleted. Delivery workers call it now and then.
   */
  prune(args?: { before?: number }): Promise<number>;
  /**
   * A subscription's stream deliveries in `state`, by id (event seq) ascending, after `afterId`,
   * at most `limit`. No state: failed (dead letters not requeued) and pending ones; "delivered":
   * kept events of its subtree it has passed since it was created, without a dead letter.
   */
  /**
   * How many "delivered" deliveries a subscription has (what `deliveries` and `redeliveries` list
   * in that state): for ListDeliveries' `totalCount`.
   */
  deliveredCount(subscriptionUid: string): Promise<number>;
  deliveries(args: {
    subscriptionUid: string;
    state?: DeliveryState;
    afterId?: number;
    limit: number;
  }): Promise<DeliveryRow[]>;
  /**
   * A subscription's redeliveries in `state` (none: pending and failed ones not requeued again),
   * by id (the row's seq) ascending, after `afterId`, at most `limit`.
   */
  redeliveries(args: {
    subscriptionUid: string;
    state?: DeliveryState;
    afterId?: number;
    limit: number;
  }): Promise<DeliveryRow[]>;
  /** The delivery named by `uid` (stream or redelivery) while its event is kept. */
  delivery(uid: string): Promise<DeliveryRow | undefined>;
  /**
   * Queues `deliveries` of the subscription again (one redelivery each, uids given), at `now`.
   * Dead letters and failed redeliveries named by `redeliveryOf` stop being dead letters
   * (`requeued_as`). Events no longer kept are skipped. Returns the redeliveries written.
   */
  requeue(args: {
    subscriptionUid: string;
    deliveries: readonly { uid: string; eventSeq: number; redeliveryOf: string }[];
    now: number;
  }): Promise<DeliveryRow[]>;
  /** The subscription's dead letters (stream and redeliveries, not requeued), oldest first. */
  deadLetters(subscriptionUid: string): Promise<{ uid: string; eventSeq: number }[]>;
  /**
   * The kept events of the subscription's subtree with `time >= since` that it is not owed (at or
   * before its cursor) and has no pending redelivery of, in seq order; `streamed`: the event came
   * after the subscription was created (its stream had a delivery of it).
   */
  replayable(args: { subscriptionUid: string; since: number }): Promise<{ seq: number; streamed: boolean }[]>;
}
