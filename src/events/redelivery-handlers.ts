import type { DescMessage, MessageInitShape } from "@bufbuild/protobuf";
import { fromTimestamp } from "../core/api-convert.js";
import { failedPrecondition, invalidArgument, notFound } from "../core/errors.js";
import type { ServiceHandlers } from "../core/service.js";
import {
  DeliverySchema,
  RedriveSubscriptionRequestSchema,
  ReplaySubscriptionRequestSchema,
  type SubscriptionsService,
} from "../gen/platform/events/v2/subscriptions_pb.js";
import { newRedeliveryUid, parseDeliveryUid, streamDeliveryUid } from "../storage/delivery-uid.js";
import type { SubscriptionRow } from "../storage/event-store.js";
import type { Store } from "../storage/store.js";
import { deliveryMessage } from "./delivery-message.js";
import type { ChangeContext, EventRecorder } from "./event-recorder.js";
import { recordedMutation } from "./recorded-mutation.js";

/** What the redelivery RPCs are built from (a subset of SubscriptionsServiceDeps). */
export interface RedeliveryDeps {
  store: Pick<Store, "subscriptions" | "events" | "transaction">;
  events: EventRecorder;
}

/** The reason of the FAILED_PRECONDITION answered to `:redeliver` of a delivery still owed. */
export const DELIVERY_PENDING = "DELIVERY_PENDING";

type RedeliveryHandlers = Pick<
  ServiceHandlers<typeof SubscriptionsService>,
  "redeliverDelivery" | "redriveSubscription" | "replaySubscription"
>;

/**
 * `:redeliver`, `:redrive` and `:replay` (ADR 0049): each queues redeliveries, new deliveries of
 * kept events with the events' own CloudEvent ids, in one transaction with their event
 * (`dev.wharf.api.events.delivery.created.v1`, or `created.batch` for a subscription's). The
 * dispatcher sends a lane's redeliveries before its stream, with the same retries and dead letters.
 * The caller's capability on the subscription's group was checked by the pipeline (scope `uid`).
 */
export function createRedeliveryHandlers(deps: RedeliveryDeps): RedeliveryHandlers {
  const { store } = deps;

  async function subscriptionOf(uid: string): Promise<SubscriptionRow> {
    const row = await store.subscriptions.get(uid);
    if (!row) throw notFound("subscription", uid);
    return row;
  }

  /**
   * Queues a redelivery of each of `deliveries` for `subscription` in one transaction with one
   * `delivery.created.batch` event (none when there was nothing to queue); resolves with how many
   * were queued.
   */
  async function requeueBatch<D extends DescMessage>(
    ctx: ChangeContext,
    subscription: SubscriptionRow,
    deliveries: { eventSeq: number; redeliveryOf: string }[],
    request: { schema: D; body: MessageInitShape<D> },
  ): Promise<bigint> {
    const written = await recordedMutation(
      deps,
      ctx,
      (tx) =>
        tx.events.requeue({
          subscriptionUid: subscription.uid,
          deliveries: deliveries.map((d) => ({ uid: newRedeliveryUid(subscription.uid), ...d })),
          now: ctx.clock.now(),
        }),
      (rows) =>
        rows.length === 0
          ? undefined
          : {
              resource: "delivery",
              verb: "created.batch",
              subject: subscription.uid,
              group: subscription.groupUid,
              schema: request.schema,
              body: request.body,
            },
    );
    return BigInt(written.length);
  }

  return {
    async redeliverDelivery(req, ctx) {
      const parsed = parseDeliveryUid(req.uid);
      if (!parsed)
        throw invalidArgument("uid", `"${req.uid}" is not a delivery uid (<subscription uid>/<16 hex>)`);
      const subscription = await subscriptionOf(parsed.subscriptionUid);
      const row = await store.events.delivery(req.uid);
      if (!row) throw notFound("delivery", req.uid);
      if (row.state === "pending") {
        throw failedPrecondition(
          DELIVERY_PENDING,
          `delivery ${req.uid} is still pending: it is sent without being asked`,
          req.uid,
        );
      }
      const uid = newRedeliveryUid(subscription.uid);
      const [written] = await recordedMutation(
        deps,
        ctx,
        (tx) =>
          tx.events.requeue({
            subscriptionUid: subscription.uid,
            deliveries: [{ uid, eventSeq: row.event.seq, redeliveryOf: row.uid }],
            now: ctx.clock.now(),
          }),
        (rows) => {
          const first = rows[0];
          return (
            first && {
              resource: "delivery" as const,
              verb: "created" as const,
              subject: first.uid,
              group: subscription.groupUid,
              schema: DeliverySchema,
              body: deliveryMessage(first),
            }
          );
        },
      );
      // Pruned between the read and the write.
      if (!written) throw notFound("delivery", req.uid);
      return deliveryMessage(written);
    },

    async redriveSubscription(req, ctx) {
      const subscription = await subscriptionOf(req.uid);
      const deadLetters = await store.events.deadLetters(subscription.uid);
      const requeued = await requeueBatch(
        ctx,
        subscription,
        deadLetters.map((d) => ({ eventSeq: d.eventSeq, redeliveryOf: d.uid })),
        { schema: RedriveSubscriptionRequestSchema, body: { uid: subscription.uid } },
      );
      return { requeued };
    },

    async replaySubscription(req, ctx) {
      const since = fromTimestamp(req.since);
      if (since === undefined) throw invalidArgument("since", "since is required (RFC 3339)");
      if (since > ctx.clock.now()) throw invalidArgument("since", "since must not be in the future");
      const subscription = await subscriptionOf(req.uid);
      const events = await store.events.replayable({ subscriptionUid: subscription.uid, since });
      const requeued = await requeueBatch(
        ctx,
        subscription,
        // Naming the stream delivery lets a dead letter among them stop being one.
        events.map(({ seq, streamed }) => ({
          eventSeq: seq,
          redeliveryOf: streamed ? streamDeliveryUid(subscription.uid, seq) : "",
        })),
        { schema: ReplaySubscriptionRequestSchema, body: { uid: subscription.uid, since: req.since } },
      );
      return { requeued };
    },
  };
}
