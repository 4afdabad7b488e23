/**
 * A registry that answers whatever a test wants (a node:http server on loopback), to check how the
 * remote client takes hostile or broken answers. It records each request and counts connections.
 *
 * ```ts
 * const server = await startHostileRegistry((req, res) => { res.writeHead(404); res.end(); });
 * // … server.url, server.requests, server.connections …
 * await server.close();
 * ```
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** A request as the server saw it. */
export interface SeenRequest {
  method: string;
  /** Path and query. */
  url: string;
  headers: IncomingMessage["headers"];
}

/** The running server. */
export interface HostileRegistry {
  /** `http://<host>:<port>`. */
  url: string;
  port: number;
  requests: SeenRequest[];
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** Starts a server on `host` (127.0.0.1) whose every request `handler` answers. */
export function startHostileRegistry(
  handler: (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => unknown,
  host = "127.0.0.1",
): Promise<HostileRegistry> {
  const requests: SeenRequest[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((req, res) => {
    const seen = { method: req.method ?? "", url: req.url ?? "", headers: req.headers };
    requests.push(seen);
    Promise.resolve(handler(req, res, seen)).catch(() => res.socket?.destroy());
  });
  server.on("connection", (socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${host}:${port}`,
        port,
        requests,
        connections: () => connections,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
