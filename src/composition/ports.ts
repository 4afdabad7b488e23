import type { IssuerUrls } from "../auth/issuer-urls.js";
import { publicUrlOf, type WharfConfig } from "../config/config.js";
import { type BoundRegistryServer, bindRegistryServer } from "../oci/registry-server.js";
import { type BoundApiServer, bindApiServer } from "../transport/create-api-handler.js";

/** The public URLs of both faces: the API's (issuer, API audience) and the registry's (its audience). */
export type PublicUrls = IssuerUrls;

/** Both ports, bound and not yet serving, and the public URLs they give. */
export interface BoundPorts {
  /** Answers 503 until `serve(handler)` (see `bindApiServer`). */
  api: BoundApiServer;
  /** Answers 503 until `serve(deps)` (see `bindRegistryServer`). */
  registry: BoundRegistryServer;
  urls: PublicUrls;
}

/**
 * Binds the API port, then the registry port, and works out both public URLs: the configured
 * ones, else `http://` + the bound address (the real port when 0 was asked). Everything else is
 * built from these values before either port serves. When the registry port cannot be bound the
 * API port is closed (`graceMs: 0`) before the error is rethrown, so nothing stays bound.
 */
export async function bindPorts(
  config: Pick<WharfConfig, "apiAddr" | "registryAddr" | "publicUrl" | "registryUrl">,
  logger: (line: object) => void,
): Promise<BoundPorts> {
  const api = await bindApiServer(config.apiAddr);
  const registry = await bindRegistryServer(config.registryAddr, logger).catch(async (err: unknown) => {
    await api.close({ graceMs: 0 });
    throw err;
  });
  const urls = {
    apiUrl: publicUrlOf(config.publicUrl, api.address),
    registryUrl: publicUrlOf(config.registryUrl, registry.address),
  };
  return { api, registry, urls };
}
