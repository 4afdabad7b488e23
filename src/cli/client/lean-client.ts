import { Code } from "@connectrpc/connect";
import type { WharfClient } from "../../sdk/client.js";
import { WharfApiError } from "../../sdk/errors.js";
import type { FetchFunction } from "../../sdk/http.js";
import { authInterceptor } from "../../sdk/interceptors.js";
import { createRegistryHelpers } from "../../sdk/registry.js";
import { clientsFor, type ServiceTable } from "../../sdk/service-clients.js";
import { fetchServerConfig } from "../../sdk/sts.js";
import type { TokenSource } from "../../sdk/token-sources.js";
import { connectWebTransport } from "../../sdk/web-transports.js";

/**
 * A WharfClient holding only the services of `services` (a part of the SDK's WHARF_SERVICES), for
 * one command: each generated service file costs a cold process its loading and descriptor
 * decoding, so a command loads only the ones it calls (bench:cli). The same parts as
 * createWharfClient: the Connect transport over fetch with the bearer of `tokenSource`, the SDK's
 * clients with typed WharfApiError failures (clientsFor, which loads no service table), and the
 * registry helpers. Calling a service outside `services` is a programming error (a TypeError),
 * caught by the e2e test of each verb.
 */
export function leanClient(options: {
  apiUrl: string;
  services: ServiceTable;
  tokenSource: TokenSource;
  fetch: FetchFunction;
}): WharfClient {
  const { apiUrl, tokenSource } = options;
  const transport = connectWebTransport()({
    baseUrl: apiUrl,
    interceptors: [authInterceptor(tokenSource)],
    fetch: options.fetch,
  });
  let registryUrl: Promise<string> | undefined;
  const learnRegistryUrl = (): Promise<string> => {
    registryUrl ??= fetchServerConfig(apiUrl, options.fetch).then((config) => {
      if (!config.registryUrl) {
        throw new WharfApiError({ code: Code.Unavailable, message: `${apiUrl} reports no registry URL yet` });
      }
      return config.registryUrl;
    });
    return registryUrl;
  };
  return {
    ...clientsFor(options.services, transport),
    ...createRegistryHelpers({ apiUrl, registryUrl: learnRegistryUrl, tokenSource, fetch: options.fetch }),
    apiUrl,
    registryUrl: learnRegistryUrl,
    transport,
  } as unknown as WharfClient;
}
