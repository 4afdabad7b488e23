import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import type { ListenAddress } from "../config/config.js";
import { createRegistryHandler } from "./registry-handler.js";
import type { RegistryDeps } from "./registry-request.js";

/** A running registry listener. */
export interface RegistryServer {
  /** The bound address (the real port when 0 was asked). */
  address: ListenAddress;
  /** Stops accepting, waits up to `graceMs` (default 5 s) for requests in flight, then closes every connection. */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Serves the OCI registry (distribution API, `/token`, Tag History API) over HTTP/1.1 on `addr`.
 * Blob transfers stream; no request or response timeout cuts a long upload.
 */
export async function startRegistryServer(
  addr: ListenAddress,
  deps: () => RegistryDeps,
  logger: (line: object) => void,
): Promise<RegistryServer> {
  const handler = createRegistryHandler(deps, logger);
  const server: Server = createServer({ requestTimeout: 0, keepAliveTimeout: 65_000 }, (req, res) => {
    handler(req, res).catch((err) => {
      // The handler answers its own errors; this is a bug in that answering. Keep serving.
      logger({ level: "error", service: "registry", error: String((err as Error)?.stack ?? err) });
      res.destroy();
    });
  });
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(addr.port, addr.host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  return {
    address: { host: addr.host, port: bound.port },
    async close({ graceMs = 5000 } = {}) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, graceMs);
      await closed;
      clearTimeout(timer);
      // Its hashing worker: nothing may run on after the server closed.
      await deps().uploads.close();
    },
  };
}
