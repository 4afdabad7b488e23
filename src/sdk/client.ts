import { type ClientCore, createClientCore, type WharfClientOptions } from "./client-core.js";
import { type ClientsOf, clientsFor } from "./service-clients.js";
import { WHARF_SERVICES } from "./services.js";

export type { WharfClientOptions } from "./client-core.js";
export { type ClientsOf, clientsFor } from "./service-clients.js";

/** A Wharf client: every service by domain (`client.iam.groups.listGroups(…)`), and the registry helpers. */
export type WharfClient = ClientsOf<typeof WHARF_SERVICES> & ClientCore;

/**
 * Creates a client of a Wharf server. Every call carries `authorization: Bearer <token>` from the
 * token source, and every failure rejects with one error class, `WharfApiError` (code, message,
 * decoded google.rpc.Status details). Nothing is fetched until a call is made. Every service's
 * descriptor is loaded with it; `createLazyWharfClient` is the same client loading each domain's
 * on its first call (for a browser's start-up).
 */
export function createWharfClient(options: WharfClientOptions): WharfClient {
  const core = createClientCore(options);
  return { ...clientsFor(WHARF_SERVICES, core.transport), ...core };
}
