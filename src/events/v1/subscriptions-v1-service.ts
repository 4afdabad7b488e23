import type { ServiceHandlers } from "../../core/service.js";
import { withIdFilter } from "../../core/v1-face.js";
import { v1Resource } from "../../core/v1-face-convert.js";
import { v1Crud } from "../../core/v1-face-crud.js";
import { SubscriptionSchema, type Subscriptions } from "../../gen/platform/events/v1/subscriptions_pb.js";
import {
  SubscriptionsService,
  SubscriptionSchema as V2SubscriptionSchema,
} from "../../gen/platform/events/v2/subscriptions_pb.js";

/**
 * A v1 subscription: the v2 one by table (`id`, `sink`; the v2 delivery status has no v1 field).
 * A create body writes only its sink (no PUT).
 */
const SUBSCRIPTION_V1 = v1Resource({ v1: SubscriptionSchema, v2: V2SubscriptionSchema, updatable: ["sink"] });

/**
 * The v1 Subscriptions service, the standard v1 CRUD over the v2 SubscriptionsService handlers
 * `subscriptions` (docs/adr/0030), without PUT: the same checks, sink rules, errors and events.
 */
export function createSubscriptionsV1Service(
  subscriptions: ServiceHandlers<typeof SubscriptionsService>,
): ServiceHandlers<typeof Subscriptions> {
  const face = v1Crud(SubscriptionsService, subscriptions, SUBSCRIPTION_V1, "/events/v2/subscriptions");
  return {
    async list(req, ctx) {
      const uidp = withIdFilter(req.uidp, req.id);
      return uidp ? face.list({ uidp }, ctx) : { items: [] };
    },
    create: (req, ctx) => face.create(req.parentId, { sink: req.subscription?.sink ?? "" }, ctx),
    delete: (req, ctx) => face.delete(req.id, ctx),
  };
}
