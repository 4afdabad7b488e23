import type { IssuerUrls } from "../auth/issuer-urls.js";
import { publicUrlOf, type WharfConfig } from "../config/config.js";
import { type BoundRegistryServer, bindRegistryServer } from "../oci/registry-server.js";
import { type BoundApiServer, bindApiServer } from "../transport/create-api-handler.js";
import type { ServedTls } from "./tls.js";

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
 * Binds the API port, then the registry port (each serving TLS when `tls` has its terminator),
 * and works out both public URLs: the configured ones, else `http://` (`https://` with TLS) + the
 * bound address (the real port when 0 was asked). Everything else is
 * built from these values before either port serves. When the registry port cannot be bound the
 * API port is closed (`graceMs: 0`) before the error is rethrown, so nothing stays bound.
 */
export async function bindPorts(
  config: Pick<WharfConfig, "apiAddr" | "registryAddr" | "publicUrl" | "registryUrl">,
  logger: (line: object) => void,
  tls?: Pick<ServedTls, "api" | "registry">,
): Promise<BoundPorts> {
  const api = await bindApiServer({ ...config.apiAddr, tls: tls?.api });
  const registry = await bindRegistryServer(config.registryAddr, logger, tls?.registry).catch(
    async (err: unknown) => {
      await api.close({ graceMs: 0 });
      throw err;
    },
  );
  const urls = {
    apiUrl: publicUrlOf(config.publicUrl, api.address, tls?.api !== undefined),
    registryUrl: publicUrlOf(config.registryUrl, registry.address, tls?.registry !== undefined),
  };
  return { api, registry, urls };
}
