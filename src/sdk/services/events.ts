import { SubscriptionsService } from "../../gen/platform/events/v2/subscriptions_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the events domain (`client.events.…`). */
export const EVENTS_SERVICES = {
  subscriptions: SubscriptionsService,
} as const satisfies ServiceTable[string];
