import { Code, type Transport } from "@connectrpc/connect";
import { WharfApiError } from "./errors.js";
import type { FetchFunction } from "./http.js";
import { authInterceptor } from "./interceptors.js";
import { createRegistryHelpers, type RegistryHelpers } from "./registry.js";
import { fetchServerConfig } from "./sts.js";
import type { TokenSource } from "./token-sources.js";
import { connectWebTransport, type TransportFactory } from "./web-transports.js";
import { fetchWhoAmI, type WhoAmI } from "./who-am-i.js";

// The parts of a client besides its service clients, shared by createWharfClient (every service
// table loaded up front) and createLazyWharfClient (each domain's table loaded on first use).

/** Options of `createWharfClient` and `createLazyWharfClient`. */
export interface WharfClientOptions {
  /** The platform API's URL, e.g. `https://wharf.example.com` (the Connect services and the STS). */
  apiUrl: string;
  /** The registry's URL; default: read once from the server's `/auth/v1/config` when first needed. */
  registryUrl?: string;
  /** Where each call's token comes from ({@link staticToken}, `storedLogin`, `stsExchange`); none = anonymous. */
  tokenSource?: TokenSource;
  /** How RPCs travel; default {@link connectWebTransport} (Connect JSON over fetch). */
  transport?: TransportFactory;
  /** The fetch of every HTTP request (the transport's too, where it uses fetch); default the global one. */
  fetch?: FetchFunction;
}

/** A client's registry helpers, URLs, who-am-I and transport: everything but the service clients. */
export type ClientCore = RegistryHelpers & {
  /** The API URL the client talks to (its origin). */
  readonly apiUrl: string;
  /** The registry's URL (given, or learned from the server). */
  registryUrl(): Promise<string>;
  /** Who the token source's token belongs to, and their groups (`GET /auth/v1/ok`). */
  whoAmI(): Promise<WhoAmI>;
  /**
   * The transport every service client uses, with the token source's interceptor (calls made on
   * it directly reject with Connect's ConnectError; the service clients turn that into WharfApiError).
   */
  readonly transport: Transport;
};

/** Builds the transport, the registry URL look-up, the registry helpers and who-am-I of a client. */
export function createClientCore(options: WharfClientOptions): ClientCore {
  const apiUrl = new URL(options.apiUrl).origin;
  const fetchFn: FetchFunction = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const interceptors = options.tokenSource ? [authInterceptor(options.tokenSource)] : [];
  const transport = (options.transport ?? connectWebTransport())({
    baseUrl: apiUrl,
    interceptors,
    fetch: fetchFn,
  });
  let registryUrl: Promise<string> | undefined = options.registryUrl
    ? Promise.resolve(new URL(options.registryUrl).origin)
    : undefined;
  const learnRegistryUrl = (): Promise<string> => {
    if (registryUrl) return registryUrl;
    const lookUp = fetchServerConfig(apiUrl, fetchFn).then((config) => {
      if (!config.registryUrl) {
        throw new WharfApiError({ code: Code.Unavailable, message: `${apiUrl} reports no registry URL yet` });
      }
      return config.registryUrl;
    });
    // A failed look-up is not kept: the next call asks again.
    lookUp.catch(() => {
      registryUrl = undefined;
    });
    registryUrl = lookUp;
    return lookUp;
  };
  return {
    ...createRegistryHelpers({
      apiUrl,
      registryUrl: learnRegistryUrl,
      tokenSource: options.tokenSource,
      fetch: fetchFn,
    }),
    apiUrl,
    registryUrl: learnRegistryUrl,
    whoAmI: () => fetchWhoAmI(apiUrl, options.tokenSource, fetchFn),
    transport,
  };
}
