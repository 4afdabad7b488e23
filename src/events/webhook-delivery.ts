import { createDeliverySigner } from "../auth/delivery-signer.js";
import type { Issuer } from "../auth/issuer.js";
import type { Clock } from "../core/clock.js";
import type { EventOutboxStore } from "../storage/event-store.js";
import {
  type DispatcherLogger,
  type DispatcherOptions,
  type EventDispatcher,
  startEventDispatcher,
} from "./event-dispatcher.js";
import { createSinkAddressPolicy, type SinkAddressOptions } from "./sink-address-policy.js";
import { type SinkResolver, systemSinkResolver } from "./sink-host.js";
import { WEBHOOK_AUDIENCE } from "./webhook-request.js";
import { createWebhookSender } from "./webhook-sender.js";

/** The User-Agent of every webhook delivery. */
export const WEBHOOK_USER_AGENT = "Wharf/0.1.0";
/** Lifetime of a delivery's token (s). */
const DELIVERY_TOKEN_TTL_SECONDS = 300;

/**
 * Delivers the outbox over HTTP on the calling thread: a webhook sender, tokens signed with the
 * issuer's current key, and startEventDispatcher. `close` stops the dispatcher, then the sender's
 * connections. The serving process runs it on a worker thread (dispatcher-thread.ts).
 * Connections go only to addresses the sink address policy with `sinkAddresses` allows, host
 * names resolved with `resolveSinkHost` (default: the system resolver).
 */
export function startWebhookDelivery(deps: {
  events: EventOutboxStore;
  issuer: Pick<Issuer, "issuerUrl" | "keys">;
  clock: Clock;
  logger: DispatcherLogger;
  options: Partial<DispatcherOptions>;
  sinkAddresses: SinkAddressOptions;
  resolveSinkHost?: SinkResolver;
}): EventDispatcher {
  const sender = createWebhookSender(WEBHOOK_USER_AGENT, {
    policy: createSinkAddressPolicy(deps.sinkAddresses),
    resolve: deps.resolveSinkHost ?? systemSinkResolver,
  });
  const dispatcher = startEventDispatcher({
    events: deps.events,
    sign: createDeliverySigner({
      issuer: deps.issuer,
      audience: WEBHOOK_AUDIENCE,
      ttlSeconds: DELIVERY_TOKEN_TTL_SECONDS,
      clock: deps.clock,
    }),
    send: sender.send,
    clock: deps.clock,
    logger: deps.logger,
    options: deps.options,
  });
  return {
    poke: () => dispatcher.poke(),
    async close() {
      await dispatcher.close();
      sender.close();
    },
  };
}
