import type { DeliverySigner } from "../auth/delivery-signer.js";
import { setBounded } from "../core/bounded-map.js";
import type { Clock } from "../core/clock.js";
import type { StoredEvent } from "../storage/event-store.js";
import { bodyDigest, cloudEventHeaders, webhookSubject } from "./webhook-request.js";

/** The HTTP headers of one delivery: CloudEvent headers plus `authorization: Bearer <token>`. */
export type DeliveryHeaders = (
  subscriptionGroupUid: string,
  event: StoredEvent,
) => Promise<Record<string, string>>;

/** How long a prepared event's headers are reused (ms); tokens live 5 min, so reused ones keep ≥ 4. */
const DEFAULT_REUSE_MS = 60_000;
/** Events whose headers are kept at once (the oldest are dropped first). */
const DEFAULT_MAX_EVENTS = 4096;

interface PreparedEvent {
  preparedAt: number;
  digest: string;
  byGroup: Map<string, Promise<Record<string, string>>>;
}

/**
 * Builds each delivery's headers, doing the work once per event (body digest, CloudEvent headers)
 * and once per event and subscription group (the signed token), since an event usually goes to
 * several subscriptions of one organization at about the same time: signing was the largest single
 * cost of a delivery. Lanes of one group therefore send the same token (same `jti`); it names the
 * group, not the sink, so it proves nothing more per sink than a fresh one would. Entries are
 * reused for `reuseMs` and at most `maxEvents` are kept; a failed signing is not cached.
 */
export function createDeliveryHeaders(deps: {
  sign: DeliverySigner;
  clock: Clock;
  reuseMs?: number;
  maxEvents?: number;
}): DeliveryHeaders {
  const reuseMs = deps.reuseMs ?? DEFAULT_REUSE_MS;
  const maxEvents = deps.maxEvents ?? DEFAULT_MAX_EVENTS;
  const prepared = new Map<number, PreparedEvent>();

  const preparedOf = (event: StoredEvent): PreparedEvent => {
    const now = deps.clock.now();
    let entry = prepared.get(event.seq);
    if (entry === undefined || now - entry.preparedAt > reuseMs) {
      entry = { preparedAt: now, digest: bodyDigest(event.data), byGroup: new Map() };
      setBounded(prepared, event.seq, entry, maxEvents);
    }
    return entry;
  };

  return (groupUid, event) => {
    const entry = preparedOf(event);
    let headers = entry.byGroup.get(groupUid);
    if (headers === undefined) {
      headers = deps.sign(webhookSubject(groupUid), entry.digest).then((token) => ({
        ...cloudEventHeaders(event),
        authorization: `Bearer ${token}`,
      }));
      headers.catch(() => entry.byGroup.delete(groupUid));
      entry.byGroup.set(groupUid, headers);
    }
    return headers;
  };
}
