import type { Issuer } from "../auth/issuer.js";
import type { EventsConfig } from "../config/config.js";
import { type Clock, systemClock } from "../core/clock.js";
import { startDispatcherThread } from "../events/dispatcher-thread.js";
import type { DispatcherOptions } from "../events/event-dispatcher.js";
import { createEventRecorder, type EventRecorder } from "../events/event-recorder.js";
import {
  type PullEventBuffer,
  type PullEventOptions,
  startPullEventBuffer,
} from "../events/pull-event-buffer.js";
import { createSinkAddressPolicy, type SinkAddressOptions } from "../events/sink-address-policy.js";
import type { SinkResolver } from "../events/sink-host.js";
import { startWebhookDelivery } from "../events/webhook-delivery.js";
import type { ServiceDeps } from "../service-bindings.js";
import type { OpenStoreOptions } from "../storage/sql/open-store.js";
import type { Store } from "../storage/store.js";
import type { PublicUrls } from "./ports.js";

/** The delivery wing: what records events, and the sink rules subscriptions are checked against. */
export interface Delivery {
  /** Writes events into the outbox (in the writes' transactions) and wakes the dispatcher. */
  events: EventRecorder;
  /** Pull events, batched off the registry's pull path. */
  pullEvents: PullEventBuffer;
  /** Where subscriptions' sinks may lead, as delivery enforces it (for SubscriptionsService). */
  sinks: Pick<ServiceDeps, "allowHttpSinks" | "sinkAddresses" | "resolveSinkHost">;
}

/**
 * Starts event delivery: the dispatcher on its own thread (over `database`), or on this thread
 * when `clock` is not the system clock or `tunables.resolveSinkHost` is given (a thread can share
 * neither); then the event recorder (`ce-source` from `urls`, each append waking the dispatcher)
 * and the pull-event buffer. The dispatcher and the buffer are stopped through `onClose`, the
 * buffer first.
 */
export function buildDelivery(deps: {
  config: EventsConfig;
  /** Tunables beyond the configuration, as `ServerOptions` gives them (tests set them). */
  tunables: {
    /** Delivery back-off, polling, batch sizes. */
    events?: Partial<DispatcherOptions> | undefined;
    /** Pull event batching. */
    pullEvents?: Partial<PullEventOptions> | undefined;
    /** Resolves sink host names (simulated DNS); default: the system resolver. */
    resolveSinkHost?: SinkResolver | undefined;
  };
  /** The store options of the delivery thread (the serving process's worker options). */
  database: OpenStoreOptions;
  store: Store;
  issuer: Issuer;
  clock: Clock;
  logger: (line: object) => void;
  urls: PublicUrls;
  onClose: (close: () => Promise<void>) => void;
}): Delivery {
  const { config, store, issuer, clock, logger } = deps;
  const { resolveSinkHost } = deps.tunables;
  const options: Partial<DispatcherOptions> = {
    maxAttempts: config.maxAttempts,
    timeoutMs: config.timeoutMs,
    leaseMs: config.leaseMs,
    retentionMs: config.retentionMs,
    ...deps.tunables.events,
  };
  const sinkAddresses: SinkAddressOptions = { allow: config.sinkAllow, allowLoopback: config.allowLoopback };
  const dispatcher =
    clock === systemClock && !resolveSinkHost
      ? startDispatcherThread(
          { database: deps.database, issuerUrl: deps.urls.apiUrl, options, sinkAddresses },
          logger,
        )
      : startWebhookDelivery({
          ...{ events: store.events, issuer, clock, logger, options, sinkAddresses },
          resolveSinkHost,
        });
  deps.onClose(() => dispatcher.close());
  const events = createEventRecorder({
    apiUrl: deps.urls.apiUrl,
    registryUrl: deps.urls.registryUrl,
    appended: () => dispatcher.poke(),
  });
  const pullEvents = startPullEventBuffer({
    store,
    recorder: events,
    clock,
    logger,
    options: deps.tunables.pullEvents,
  });
  deps.onClose(() => pullEvents.close());
  const sinks = {
    allowHttpSinks: config.allowHttp,
    sinkAddresses: createSinkAddressPolicy(sinkAddresses),
    resolveSinkHost,
  };
  return { events, pullEvents, sinks };
}
