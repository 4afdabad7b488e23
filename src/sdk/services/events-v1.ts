import { Subscriptions } from "../../gen/platform/events/v1/subscriptions_pb.js";
import type { ServiceTable } from "../service-clients.js";

/** The services of the events reference API v1 (`client.eventsV1.…`). */
export const EVENTS_V1_SERVICES = {
  subscriptions: Subscriptions,
} as const satisfies ServiceTable[string];
