import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  type BoundListener,
  NOT_SERVING_RETRY_AFTER_SECONDS,
  NOT_SERVING_YET,
} from "../transport/bound-listener.js";
import { OciError, sendOciError } from "./oci-errors.js";
import { createRegistryHandler } from "./registry-handler.js";
import type { RegistryDeps } from "./registry-request.js";

/**
 * The registry port bound and not yet serving (see {@link BoundListener}): `serve` takes the
 * registry's dependencies. Until then every request (`/healthz` and `/readyz` included) is answered
 * 503 with the OCI error envelope, code `UNAVAILABLE`.
 */
export type BoundRegistryServer = BoundListener<RegistryDeps>;

/**
 * Binds the OCI registry's port (HTTP/1.1 on `addr`) and resolves once listening, its address
 * known; `serve(deps)` then starts serving the distribution API, `/token`, Tag History API,
 * `/healthz` and `/readyz`. Blob transfers stream; no request or response timeout cuts a long
 * upload. Once serving, the bytes each connection moved are added to `deps.metrics` as each of its
 * requests is answered, and the rest when it closes. `close` also closes `deps.uploads` (its hashing
 * worker) once served. Rejects when the port cannot be bound.
 */
export async function bindRegistryServer(
  addr: { host: string; port: number },
  logger: (line: object) => void,
): Promise<BoundRegistryServer> {
  let served: { deps: RegistryDeps; handler: ReturnType<typeof createRegistryHandler> } | undefined;
  // Each open connection with the byte counts already added to the metrics.
  const sockets = new Map<Socket, { read: number; written: number }>();
  const countBytes = (socket: Socket) => {
    const counted = sockets.get(socket);
    const metrics = served?.deps.metrics;
    if (counted === undefined || metrics === undefined) return;
    metrics.transferred(socket.bytesRead - counted.read, socket.bytesWritten - counted.written);
    counted.read = socket.bytesRead;
    counted.written = socket.bytesWritten;
  };
  const server: Server = createServer({ requestTimeout: 0, keepAliveTimeout: 65_000 }, (req, res) => {
    if (!served) {
      answerNotServing(req, res);
      return;
    }
    served
      .handler(req, res)
      .catch((err) => {
        // The handler answers its own errors; this is a bug in that answering. Keep serving.
        logger({
          level: "error",
          msg: "registry handler failed",
          service: "registry",
          error: String((err as Error)?.stack ?? err),
        });
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
    serve(deps) {
      if (served) throw new Error("the registry listener already serves");
      served = { deps, handler: createRegistryHandler(deps, logger) };
    },
    async close({ graceMs = 5000 } = {}) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      // A keep-alive connection whose request was in flight turns idle when it is answered; close
      // it then rather than at the grace deadline.
      const idle = setInterval(() => server.closeIdleConnections(), 50);
      const timer = setTimeout(() => {
        for (const socket of sockets.keys()) socket.destroy();
      }, graceMs);
      await closed;
      clearInterval(idle);
      clearTimeout(timer);
      // Its hashing worker: nothing may run on after the server closed.
      await served?.deps.uploads.close();
    },
  };
}

/** The answer before `serve`: 503 UNAVAILABLE in the OCI envelope, asking to retry in a second. */
function answerNotServing(req: IncomingMessage, res: ServerResponse): void {
  const retryAfter = { "retry-after": String(NOT_SERVING_RETRY_AFTER_SECONDS) };
  sendOciError(
    res,
    new OciError("UNAVAILABLE", NOT_SERVING_YET, undefined, retryAfter),
    req.method === "HEAD",
  );
}
