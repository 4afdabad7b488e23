import { randomBytes } from "node:crypto";

/**
 * Delivery uids (ADR 0049): `<subscription uid>/<16 hex>`. A delivery of the subscription's own
 * stream is named by its event's seq (`seq` as 16 hex, so the first hex digit is below 8: seqs stay
 * below 2^63); a redelivery by 8 random bytes with the top bit set. So a uid says where its
 * delivery is kept without a lookup, and the two kinds never collide.
 */

/** The uid of the stream delivery of event `seq` to `subscriptionUid`. */
export function streamDeliveryUid(subscriptionUid: string, seq: number): string {
  return `${subscriptionUid}/${seq.toString(16).padStart(16, "0")}`;
}

/** A new redelivery uid under `subscriptionUid`. */
export function newRedeliveryUid(subscriptionUid: string): string {
  const bytes = randomBytes(8);
  bytes[0] = (bytes[0] ?? 0) | 0x80;
  return `${subscriptionUid}/${bytes.toString("hex")}`;
}

/** What a delivery uid names; undefined when it is not `<uid>/<16 hex>` under a subscription. */
export type ParsedDeliveryUid =
  | { kind: "stream"; subscriptionUid: string; seq: number }
  | { kind: "redelivery"; subscriptionUid: string };

/**
 * Parses a delivery uid. The subscription part must itself be a child uid (`<group>/<16 hex>`),
 * so a delivery uid has at least three segments.
 */
export function parseDeliveryUid(uid: string): ParsedDeliveryUid | undefined {
  const match = /^((?:[0-9a-f]{40})(?:\/[0-9a-f]{16})+)\/([0-9a-f]{16})$/.exec(uid);
  if (!match) return undefined;
  const subscriptionUid = match[1] as string;
  const hex = match[2] as string;
  if (Number.parseInt(hex[0] as string, 16) >= 8) return { kind: "redelivery", subscriptionUid };
  const seq = Number.parseInt(hex, 16);
  if (!Number.isSafeInteger(seq) || seq <= 0) return undefined;
  return { kind: "stream", subscriptionUid, seq };
}
