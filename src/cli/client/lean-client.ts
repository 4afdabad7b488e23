import type { DescService } from "@bufbuild/protobuf";
import { Code, createClient, type Transport } from "@connectrpc/connect";
import type { WharfClient } from "../../sdk/client.js";
import { toWharfApiError, WharfApiError } from "../../sdk/errors.js";
import type { FetchFunction } from "../../sdk/http.js";
import { authInterceptor } from "../../sdk/interceptors.js";
import { createRegistryHelpers } from "../../sdk/registry.js";
import type { ServiceTable } from "../../sdk/services.js";
import { fetchServerConfig } from "../../sdk/sts.js";
import type { TokenSource } from "../../sdk/token-sources.js";
import { connectWebTransport } from "../../sdk/web-transports.js";

/**
 * A WharfClient holding only the services of `services` (a part of the SDK's WHARF_SERVICES), for
 * one command: each generated service file costs a cold process its loading and descriptor
 * decoding, so a command loads only the ones it calls (bench:cli). The same parts as
 * createWharfClient: the Connect transport over fetch with the bearer of `tokenSource`, typed
 * WharfApiError failures, and the registry helpers. Calling a service outside `services` is a
 * programming error (a TypeError), caught by the e2e test of each verb.
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
  const clients: Record<string, unknown> = {};
  for (const [key, entry] of Object.entries(options.services)) {
    clients[key] =
      (entry as DescService).kind === "service"
        ? typedErrorClient(entry as DescService, transport)
        : Object.fromEntries(
            Object.entries(entry).map(([name, s]) => [name, typedErrorClient(s as DescService, transport)]),
          );
  }
  return {
    ...clients,
    ...createRegistryHelpers({ apiUrl, registryUrl: learnRegistryUrl, tokenSource, fetch: options.fetch }),
    apiUrl,
    registryUrl: learnRegistryUrl,
    transport,
  } as unknown as WharfClient;
}

/** A Connect client whose unary methods reject with WharfApiError (as the SDK's clients do). */
function typedErrorClient(service: DescService, transport: Transport): Record<string, unknown> {
  const client = createClient(service, transport) as unknown as Record<string, unknown>;
  for (const method of service.methods) {
    if (method.methodKind !== "unary") continue;
    const call = client[method.localName] as (...args: unknown[]) => Promise<unknown>;
    client[method.localName] = (...args: unknown[]) =>
      call(...args).catch((err: unknown) => {
        throw toWharfApiError(err);
      });
  }
  return client;
}
