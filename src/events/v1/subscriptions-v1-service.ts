import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, withIdFilter } from "../../core/v1-face.js";
import type { Subscriptions } from "../../gen/platform/events/v1/subscriptions_pb.js";
import {
  CreateSubscriptionRequestSchema,
  DeleteSubscriptionRequestSchema,
  ListSubscriptionsRequestSchema,
  type SubscriptionsService,
  type Subscription as V2Subscription,
  SubscriptionSchema as V2SubscriptionSchema,
} from "../../gen/platform/events/v2/subscriptions_pb.js";

/** The v1 subscription of a v2 one (`id`, `sink`; the v2 delivery status has no v1 field). */
const subscriptionV1 = (s: V2Subscription) => ({ id: s.uid, sink: s.sink });

/**
 * The v1 Subscriptions service, a face over the v2 SubscriptionsService handlers `subscriptions`
 * (docs/adr/0030): the same checks, sink rules, errors and events.
 */
export function createSubscriptionsV1Service(
  subscriptions: ServiceHandlers<typeof SubscriptionsService>,
): ServiceHandlers<typeof Subscriptions> {
  return {
    async list(req, ctx) {
      const uidp = withIdFilter(req.uidp, req.id);
      if (!uidp) return { items: [] };
      const found = await everyV2Item(
        "/events/v2/subscriptions",
        (paging) =>
          subscriptions.listSubscriptions(create(ListSubscriptionsRequestSchema, { uidp, ...paging }), ctx),
        (page) => page.subscriptions,
      );
      return { items: found.map((s) => subscriptionV1(create(V2SubscriptionSchema, s))) };
    },

    async create(req, ctx) {
      const created = await subscriptions.createSubscription(
        create(CreateSubscriptionRequestSchema, {
          parent: req.parentId,
          subscription: { sink: req.subscription?.sink ?? "" },
        }),
        ctx,
      );
      return subscriptionV1(create(V2SubscriptionSchema, created));
    },

    async delete(req, ctx) {
      await subscriptions.deleteSubscription(create(DeleteSubscriptionRequestSchema, { uid: req.id }), ctx);
      return {};
    },
  };
}
