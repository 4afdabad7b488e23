import { create } from "@bufbuild/protobuf";
import { toTimestamp } from "../core/api-convert.js";
import { type Delivery, DeliverySchema } from "../gen/platform/events/v2/subscriptions_pb.js";
import type { DeliveryRow } from "../storage/event-store.js";

/** The API's Delivery for a stored delivery row (stream or redelivery). */
export function deliveryMessage(row: DeliveryRow): Delivery {
  return create(DeliverySchema, {
    uid: row.uid,
    state: row.state,
    redeliveryOf: row.redeliveryOf,
    attempts: BigInt(row.attempts),
    lastAttemptTime: row.lastAttemptTime > 0 ? toTimestamp(row.lastAttemptTime) : undefined,
    lastStatus: row.lastStatus,
    lastError: row.lastError,
    eventId: row.event.id,
    eventType: row.event.type,
    eventSubject: row.event.subject,
    eventTime: toTimestamp(row.event.time),
  });
}
