import { createHash } from "node:crypto";
import { formatTimestamp } from "../core/clock.js";
import type { StoredEvent } from "../storage/event-store.js";

/** Claim of a delivery's token: `{webhook: {digest: "sha256:<hex of the body>"}}`. */
export interface WebhookClaim {
  webhook: { digest: string };
}

/** The audience of every delivery token. */
export const WEBHOOK_AUDIENCE = "customer";

/** `webhook:<group uid of the subscription>`: the `sub` of a delivery token. */
export function webhookSubject(subscriptionGroupUid: string): string {
  return `webhook:${subscriptionGroupUid}`;
}

/** `sha256:<hex>` of the exact body bytes. */
export function bodyDigest(body: string | Uint8Array): string {
  return `sha256:${createHash("sha256").update(body).digest("hex")}`;
}

/**
 * The HTTP headers of a CloudEvents 1.0 binary-mode delivery of `event`, without Authorization:
 * `ce-id`, `ce-specversion`, `ce-source`, `ce-type`, `ce-subject`, `ce-time`, `ce-group`,
 * `ce-audience: customer`, one `ce-<name>` per extension, and `content-type: application/json`. The
 * distributed-tracing extension's `traceparent` and `tracestate` go in the W3C headers of those
 * names, as that extension's HTTP binding says, not as `ce-` headers.
 */
export function cloudEventHeaders(event: StoredEvent): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "ce-id": event.id,
    "ce-specversion": "1.0",
    "ce-source": event.source,
    "ce-type": event.type,
    "ce-subject": event.subject,
    "ce-time": formatTimestamp(event.time),
    "ce-group": event.groupUid,
    "ce-audience": WEBHOOK_AUDIENCE,
  };
  for (const [name, value] of Object.entries(event.extensions))
    headers[name === "traceparent" || name === "tracestate" ? name : `ce-${name}`] = value;
  return headers;
}
