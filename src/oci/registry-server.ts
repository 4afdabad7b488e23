import { createServer, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createRegistryHandler } from "./registry-handler.js";
import type { RegistryDeps } from "./registry-request.js";

/** A running registry listener. */
export interface RegistryServer {
  /** The bound address (the real port when 0 was asked). */
  address: { host: string; port: number };
  /** Stops accepting, waits up to `graceMs` (default 5 s) for requests in flight, then closes every connection. */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Serves the OCI registry (distribution API, `/token`, Tag History API, `/healthz`, `/readyz`) over
 * HTTP/1.1 on `addr`. Blob transfers stream; no request or response timeout cuts a long upload.
 * The bytes each connection moved are added to `deps().metrics` as each of its requests is
 * answered, and the rest when it closes.
 */
export async function startRegistryServer(
  addr: { host: string; port: number },
  deps: () => RegistryDeps,
  logger: (line: object) => void,
): Promise<RegistryServer> {
  const handler = createRegistryHandler(deps, logger);
  // Each open connection with the byte counts already added to the metrics.
  const sockets = new Map<Socket, { read: number; written: number }>();
  const countBytes = (socket: Socket) => {
    const counted = sockets.get(socket);
    const metrics = deps()?.metrics;
    if (counted === undefined || metrics === undefined) return;
    metrics.transferred(socket.bytesRead - counted.read, socket.bytesWritten - counted.written);
    counted.read = socket.bytesRead;
    counted.written = socket.bytesWritten;
  };
  const server: Server = createServer({ requestTimeout: 0, keepAliveTimeout: 65_000 }, (req, res) => {
    handler(req, res)
      .catch((err) => {
        // The handler answers its own errors; this is a bug in that answering. Keep serving.
        logger({ level: "error", service: "registry", error: String((err as Error)?.stack ?? err) });
        res.destroy();
      })
      .finally(() => countBytes(req.socket));
  });
  server.on("connection", (socket: Socket) => {
    sockets.set(socket, { read: 0, written: 0 });
    socket.once("close", () => {
      countBytes(socket);
      sockets.delete(socket);
    });
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
        for (const socket of sockets.keys()) socket.destroy();
      }, graceMs);
      await closed;
      clearTimeout(timer);
      // Its hashing worker: nothing may run on after the server closed.
      await deps().uploads.close();
    },
  };
}
