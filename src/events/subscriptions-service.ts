import { create } from "@bufbuild/protobuf";
import { pageRequestOf, toTimestamp, toUidpFilter } from "../core/api-convert.js";
import { invalidArgument, notFound, requireFound } from "../core/errors.js";
import {
  DEFAULT_PAGE_SIZE,
  type ListSpec,
  MAX_PAGE_SIZE,
  type PageTokenCodec,
  paginate,
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
import type {
  DeliveryRow,
  DeliveryState,
  SubscriptionRow,
  SubscriptionStatus,
} from "../storage/event-store.js";
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
interface DeliveryPagePosition {
  redeliveries: boolean;
  afterId: number | undefined;
}

/**
 * A delivery page token: the last delivery id shown as decimal text, prefixed `r` among the
 * redeliveries, in base64url (a bare number is a stream position, as tokens were before).
 */
function positionOf(pageToken: string): DeliveryPagePosition {
  if (pageToken === "") return { redeliveries: false, afterId: undefined };
  const text = Buffer.from(pageToken, "base64url").toString("utf8");
  const redeliveries = text.startsWith("r");
  const id = Number(redeliveries ? text.slice(1) : text);
  if (!/^r?\d+$/.test(text) || !Number.isSafeInteger(id) || id < 0) {
    throw invalidArgument("page_token", "malformed page token");
  }
  return { redeliveries, afterId: id };
}

function tokenOf(row: DeliveryRow, redeliveries: boolean): string {
  return Buffer.from(`${redeliveries ? "r" : ""}${row.id}`).toString("base64url");
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
      if (!(await store.subscriptions.get(req.subscriptionUid))) {
        throw notFound("subscription", req.subscriptionUid);
      }
      const limit = Math.min(req.pageSize > 0 ? req.pageSize : DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE);
      const state = isDeliveryState(req.state) ? req.state : undefined;
      const position = positionOf(req.pageToken);
      // The stream's deliveries first, then the redeliveries; one more row than shown tells
      // whether there is a next page.
      const stream = position.redeliveries
        ? []
        : await store.events.deliveries({
            subscriptionUid: req.subscriptionUid,
            ...(state ? { state } : {}),
            afterId: position.afterId,
            limit: limit + 1,
          });
      const again =
        stream.length > limit
          ? []
          : await store.events.redeliveries({
              subscriptionUid: req.subscriptionUid,
              ...(state ? { state } : {}),
              afterId: position.redeliveries ? position.afterId : undefined,
              limit: limit + 1 - stream.length,
            });
      const rows = [...stream, ...again];
      const shown = rows.slice(0, limit);
      const last = shown.at(-1);
      const more = rows.length > limit && last !== undefined;
      return {
        deliveries: shown.map(deliveryMessage),
        nextPageToken: more ? tokenOf(last, shown.length > stream.length) : "",
      };
    },

    ...createRedeliveryHandlers(deps),
  };
}

function isDeliveryState(state: string): state is DeliveryState {
  return state === "pending" || state === "failed" || state === "delivered";
}
