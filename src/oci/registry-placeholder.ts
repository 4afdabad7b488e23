import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { ListenAddress } from "../config/config.js";

/** A listener holding the registry port until the OCI data plane lands. */
export interface RegistryListener {
  address: ListenAddress;
  close(): Promise<void>;
}

/**
 * Reserves the registry address: every request gets 503 with an OCI error envelope
 * (code UNSUPPORTED) so registry clients fail with a clear message instead of a refused connection.
 */
export async function startRegistryPlaceholder(addr: ListenAddress): Promise<RegistryListener> {
  const server = createServer((_req, res) => {
    res.writeHead(503, {
      "content-type": "application/json",
      "docker-distribution-api-version": "registry/2.0",
    });
    res.end(
      JSON.stringify({
        errors: [{ code: "UNSUPPORTED", message: "the registry data plane is not enabled in this build" }],
      }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(addr.port, addr.host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  return {
    address: { host: addr.host, port: bound.port },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
