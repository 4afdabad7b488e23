import { create } from "@bufbuild/protobuf";
import type { ServiceHandlers } from "../../core/service.js";
import { everyV2Item, withIdFilter } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import { SubscriptionSchema, type Subscriptions } from "../../gen/platform/events/v1/subscriptions_pb.js";
import {
  CreateSubscriptionRequestSchema,
  DeleteSubscriptionRequestSchema,
  ListSubscriptionsRequestSchema,
  type SubscriptionsService,
  SubscriptionSchema as V2SubscriptionSchema,
} from "../../gen/platform/events/v2/subscriptions_pb.js";

/** A v1 subscription: the v2 one by table (`id`, `sink`; the v2 delivery status has no v1 field). */
const SUBSCRIPTION_V1 = v1Resource({ v1: SubscriptionSchema, v2: V2SubscriptionSchema, updatable: [] });

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
      return { items: found.map(SUBSCRIPTION_V1.toV1) };
    },

    async create(req, ctx) {
      const created = await subscriptions.createSubscription(
        create(CreateSubscriptionRequestSchema, {
          parent: req.parentId,
          subscription: { sink: req.subscription?.sink ?? "" },
        }),
        ctx,
      );
      return SUBSCRIPTION_V1.toV1(created);
    },

    async delete(req, ctx) {
      await subscriptions.deleteSubscription(create(DeleteSubscriptionRequestSchema, { uid: req.id }), ctx);
      return {};
    },
  };
}
