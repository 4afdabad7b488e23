// The event dispatcher thread (started by events/dispatcher-thread.ts): opens its own store and
// issuer over the shared database, delivers with startWebhookDelivery, and answers the serving
// thread's pokes and close.
import { parentPort, workerData } from "node:worker_threads";
import { createIssuer } from "../auth/issuer.js";
import { systemClock } from "../core/clock.js";
import type {
  DispatcherThreadData,
  FromDispatcherThread,
  ToDispatcherThread,
} from "../events/dispatcher-thread.js";
import { startWebhookDelivery } from "../events/webhook-delivery.js";
import { holdTracing } from "../observability/tracing.js";
import { openStore } from "../storage/sql/open-store.js";

const port = parentPort;
if (!port) throw new Error("workers/dispatcher runs as a worker thread (see events/dispatcher-thread.ts)");
const data = workerData as DispatcherThreadData;
const post = (message: FromDispatcherThread) => port.postMessage(message);

// Its own tracer, when tracing is on: a thread does not share the serving thread's (ADR 0042).
const tracing = await holdTracing();
const store = await openStore(data.database);
const issuer = createIssuer({ store, issuerUrl: data.issuerUrl, clock: systemClock });
const delivery = startWebhookDelivery({
  events: store.events,
  issuer,
  clock: systemClock,
  logger: (line) => post({ log: line }),
  options: data.options,
  sinkAddresses: data.sinkAddresses,
});

port.on("message", async (message: ToDispatcherThread) => {
  if (message === "poke") {
    delivery.poke();
    return;
  }
  await delivery.close();
  await store.close();
  await tracing.release();
  port.close();
});
