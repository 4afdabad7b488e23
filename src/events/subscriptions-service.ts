import { create } from "@bufbuild/protobuf";
import { pageRequestOf, toTimestamp, toUidpFilter } from "../core/api-convert.js";
import { invalidArgument, notFound, requireFound } from "../core/errors.js";
import {
  DEFAULT_PAGE_SIZE,
  type ListSpec,
  MAX_PAGE_SIZE,
  PageTokenCodec,
  paginate,
  parseOrderBy,
} from "../core/list.js";
import { pageEnvelope } from "../core/list-specs.js";
import type { ServiceHandlers } from "../core/service.js";
import { newChildUid } from "../core/uidp.js";
import { Capability } from "../gen/platform/capabilities/capabilities_pb.js";
import {
  DeleteSubscriptionRequestSchema,
  type Subscription,
  SubscriptionSchema,
  type SubscriptionsService,
} from "../gen/platform/events/v2/subscriptions_pb.js";
import type { DeliveryState, SubscriptionRow, SubscriptionStatus } from "../storage/event-store.js";
import type { Store } from "../storage/store.js";
import { deliveryMessage } from "./delivery-message.js";
import type { EventRecorder } from "./event-recorder.js";
import { recordedMutation } from "./recorded-mutation.js";
import { createRedeliveryHandlers } from "./redelivery-handlers.js";
import {
  createSinkAddressPolicy,
  NO_SINK_EXCEPTIONS,
  type SinkAddressPolicy,
} from "./sink-address-policy.js";
import { type SinkResolver, systemSinkResolver } from "./sink-host.js";
import { validateSink, validateSinkAddresses } from "./sink-url.js";

/** What SubscriptionsService is built from (the composition root provides it). */
export interface SubscriptionsServiceDeps {
  /**
   * Subscriptions, their deliveries in the outbox (`events`), the parent groups of new ones, and
   * `transaction`, where they are written (its `tx` is the whole Store).
   */
  store: Pick<Store, "subscriptions" | "events" | "groups" | "transaction">;
  pageTokens: PageTokenCodec;
  /** Writes events into the outbox, in the transaction of the change they report. */
  events: EventRecorder;
  /** Whether subscriptions may have plain-http sinks on non-loopback hosts (default false). */
  allowHttpSinks?: boolean;
  /** Which addresses subscriptions' sinks may lead to; default: the policy without exceptions. */
  sinkAddresses?: SinkAddressPolicy;
  /** Resolves sink host names when a subscription is created; default: the system resolver. */
  resolveSinkHost?: SinkResolver;
}

/** Default order: the primary key, as the hosted service lists subscriptions. */
const SUBSCRIPTION_LIST: ListSpec<SubscriptionRow> = {
  allowedOrder: ["uid", "create_time", "update_time"],
  defaultOrder: { field: "uid", desc: false },
  sortValue: (row, field) => (field === "uid" ? row.uid : row.createTime),
  uidOf: (row) => row.uid,
};

function subscriptionMessage(row: SubscriptionRow, status?: SubscriptionStatus): Subscription {
  return create(SubscriptionSchema, {
    uid: row.uid,
    sink: row.sink,
    createTime: toTimestamp(row.createTime),
    updateTime: toTimestamp(row.createTime),
    status: status && {
      pending: BigInt(status.pending),
      failed: BigInt(status.failed),
      retryTime: status.retryTime > 0 ? toTimestamp(status.retryTime) : undefined,
    },
  });
}

/**
 * Where a delivery page ends: in the subscription's stream (by event seq) or among its
 * redeliveries (by row seq), which are listed after the stream.
 */
/** The most rows `skip` may pass over in ListDeliveries (each is read to be skipped). */
export const MAX_DELIVERIES_SKIP = 10_000;

/**
 * Where a ListDeliveries page resumes: after the stream delivery or redelivery with id `afterId`
 * (the stream's deliveries come first, then the redeliveries).
 */
interface DeliveryPagePosition {
  redeliveries: boolean;
  afterId: number | undefined;
  skipped: number;
}

/** Reads the signed page token, bound to the subscription and state it was issued for. */
function positionOf(codec: PageTokenCodec, pageToken: string, queryHash: string): DeliveryPagePosition {
  const start = { redeliveries: false, afterId: undefined, skipped: 0 };
  if (pageToken === "") return start;
  const resumed = codec.decode(pageToken, queryHash);
  if (resumed === undefined) return start;
  const afterId = Number(resumed.cursor.value);
  if (!Number.isSafeInteger(afterId) || afterId < 0)
    throw invalidArgument("page_token", "invalid page token");
  return { redeliveries: resumed.cursor.uid === "r", afterId, skipped: resumed.skipped };
}

/**
 * SubscriptionsService: webhook subscriptions of groups (`<group uid>/<16 hex>`), and their
 * deliveries. Creating and deleting a subscription are themselves events (of the subscription's
 * group). Plain-http sinks need `allowHttp` unless they are loopback URLs. A sink's host must
 * resolve (`deps.resolveSinkHost`) to addresses only that `deps.sinkAddresses` allows (ADR 0017).
 */
export function createSubscriptionsService(
  deps: SubscriptionsServiceDeps,
): ServiceHandlers<typeof SubscriptionsService> {
  const { store } = deps;
  const sinkPolicy = deps.sinkAddresses ?? createSinkAddressPolicy(NO_SINK_EXCEPTIONS);
  const resolveSinkHost = deps.resolveSinkHost ?? systemSinkResolver;
  return {
    async listSubscriptions(req, ctx) {
      const within = await ctx.access.scopesWith([Capability.CAP_EVENTS_SUBSCRIPTION_LIST]);
      const filter = { uidp: toUidpFilter(req.uidp) };
      const page = await paginate(pageRequestOf(req), filter, SUBSCRIPTION_LIST, deps.pageTokens, (window) =>
        store.subscriptions.list({ ...filter, within }, window),
      );
      // Each listed subscription carries its delivery status, as Get does (three queries a page).
      const statuses = await store.subscriptions.statuses(page.items.map((row) => row.uid));
      return {
        subscriptions: page.items.map((row) => subscriptionMessage(row, statuses.get(row.uid))),
        ...pageEnvelope(page),
      };
    },

    async getSubscription(req) {
      const row = await store.subscriptions.get(req.uid);
      if (!row) throw notFound("subscription", req.uid);
      return subscriptionMessage(row, await store.subscriptions.status(row.uid));
    },

    async createSubscription(req, ctx) {
      const sink = validateSink(req.subscription?.sink ?? "", deps.allowHttpSinks ?? false);
      if (!(await store.groups.get(req.parent))) throw notFound("group", req.parent);
      await validateSinkAddresses(sink, sinkPolicy, resolveSinkHost);
      const row: SubscriptionRow = {
        uid: newChildUid(req.parent),
        groupUid: req.parent,
        sink,
        createTime: ctx.clock.now(),
      };
      const message = subscriptionMessage(row, { pending: 0, failed: 0, retryTime: 0 });
      await recordedMutation(deps, ctx, (tx) => tx.subscriptions.insert(row), {
        resource: "subscription",
        verb: "created",
        subject: row.uid,
        group: row.groupUid,
        schema: SubscriptionSchema,
        body: message,
      });
      return message;
    },

    async deleteSubscription(req, ctx) {
      const row = await store.subscriptions.get(req.uid);
      if (!row) throw notFound("subscription", req.uid);
      await recordedMutation(
        deps,
        ctx,
        (tx) => requireFound(tx.subscriptions.delete(req.uid), "subscription", req.uid),
        {
          resource: "subscription",
          verb: "deleted",
          subject: row.uid,
          group: row.groupUid,
          schema: DeleteSubscriptionRequestSchema,
          body: { uid: req.uid },
        },
      );
      return {};
    },

    async listDeliveries(req) {
      if (req.subscriptionUid === "")
        throw invalidArgument("subscription_uid", "subscription_uid is required");
      if (!isDeliveryState(req.state) && req.state !== "") {
        throw invalidArgument(
          "state",
          `state must be "pending", "failed", "delivered" or empty (got "${req.state}")`,
        );
      }
      if (req.pageSize < 0) throw invalidArgument("page_size", "must not be negative");
      if (req.skip < 0) throw invalidArgument("skip", "must not be negative");
      if (req.skip > MAX_DELIVERIES_SKIP) {
        throw invalidArgument("skip", `at most ${MAX_DELIVERIES_SKIP}; page with page_token instead`);
      }
      const order = parseOrderBy(req.orderBy, ["create_time"], { field: "create_time", desc: false });
      if (order.desc) {
        throw invalidArgument("order_by", "deliveries are listed in event order: create_time asc only");
      }
      const status = (await store.subscriptions.statuses([req.subscriptionUid])).get(req.subscriptionUid);
      if (!status) throw notFound("subscription", req.subscriptionUid);
      const limit = Math.min(req.pageSize > 0 ? req.pageSize : DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
      const state = isDeliveryState(req.state) ? req.state : undefined;
      const queryHash = PageTokenCodec.queryHash({
        deliveries: req.subscriptionUid,
        state: state ?? "",
        order,
      });
      const position = positionOf(deps.pageTokens, req.pageToken, queryHash);
      // The stream's deliveries first, then the redeliveries; `skip` more rows are read and
      // passed over, and one more than shown tells whether there is a next page.
      const wanted = req.skip + limit + 1;
      const stream = position.redeliveries
        ? []
        : await store.events.deliveries({
            subscriptionUid: req.subscriptionUid,
            ...(state ? { state } : {}),
            afterId: position.afterId,
            limit: wanted,
          });
      const again =
        stream.length >= wanted
          ? []
          : await store.events.redeliveries({
              subscriptionUid: req.subscriptionUid,
              ...(state ? { state } : {}),
              afterId: position.redeliveries ? position.afterId : undefined,
              limit: wanted - stream.length,
            });
      const rows = [...stream, ...again];
      const skippedNow = Math.min(req.skip, rows.length);
      const shown = rows.slice(skippedNow, skippedNow + limit);
      const last = shown.at(-1);
      const more = rows.length > skippedNow + limit && last !== undefined;
      const skipped = position.skipped + skippedNow;
      const totalCount =
        state === "delivered"
          ? await store.events.deliveredCount(req.subscriptionUid)
          : state === "pending"
            ? status.pending
            : state === "failed"
              ? status.failed
              : status.pending + status.failed;
      const inRedeliveries = last !== undefined && skippedNow + shown.length > stream.length;
      return {
        deliveries: shown.map(deliveryMessage),
        nextPageToken: more
          ? deps.pageTokens.encode(queryHash, { value: last.id, uid: inRedeliveries ? "r" : "s" }, skipped)
          : "",
        totalCount: BigInt(totalCount),
        skipped,
      };
    },

    ...createRedeliveryHandlers(deps),
  };
}

function isDeliveryState(state: string): state is DeliveryState {
  return state === "pending" || state === "failed" || state === "delivered";
}
