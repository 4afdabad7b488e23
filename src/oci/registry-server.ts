import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  type BoundListener,
  NOT_SERVING_RETRY_AFTER_SECONDS,
  NOT_SERVING_YET,
} from "../transport/bound-listener.js";
import { type DualRequestListener, listenOnePort } from "../transport/one-port-listener.js";
import type { TlsTerminator } from "../transport/tls-terminator.js";
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
 * worker) once served. With `tls` the port serves HTTPS instead, HTTP/2 and HTTP/1.1 by ALPN (the
 * bytes of an HTTP/2 connection are counted when it closes). Rejects when the port cannot be bound.
 */
export async function bindRegistryServer(
  addr: { host: string; port: number },
  logger: (line: object) => void,
  tls?: TlsTerminator,
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
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
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
  };
  const onConnection = (socket: Socket) => {
    sockets.set(socket, { read: 0, written: 0 });
    socket.once("close", () => {
      countBytes(socket);
      sockets.delete(socket);
    });
  };
  if (tls) {
    // node's HTTP/2 compatibility request and response stand in for node:http's: the handlers use
    // what both have (headers, the body stream, writeHead, end, destroy) and check the HTTP
    // version where they differ (a body without Content-Length, `Connection: close`).
    const listener = await listenOnePort({
      ...addr,
      handler: onRequest as unknown as DualRequestListener,
      tls,
      keepAliveTimeoutMs: 65_000,
      requestTimeoutMs: 0,
      // Blob uploads: HTTP/2's default 64 KiB windows would cap a push at 64 KiB per round trip.
      http2Windows: { stream: 4 * 1024 * 1024, session: 16 * 1024 * 1024 },
    });
    listener.http1.on("connection", onConnection);
    listener.http2.on("connection", onConnection);
    return boundOver(addr.host, listener.address.port, (graceMs) => listener.close({ graceMs }));
  }
  const server: Server = createServer({ requestTimeout: 0, keepAliveTimeout: 65_000 }, onRequest);
  server.on("connection", onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(addr.port, addr.host, () => resolve());
  });
  const bound = server.address() as AddressInfo;
  return boundOver(addr.host, bound.port, async (graceMs) => {
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
  });

  function boundOver(host: string, port: number, closeListener: (graceMs: number) => Promise<void>) {
    return {
      address: { host, port },
      serve(deps: RegistryDeps) {
        if (served) throw new Error("the registry listener already serves");
        served = { deps, handler: createRegistryHandler(deps, logger) };
      },
      async close({ graceMs = 5000 } = {}) {
        await closeListener(graceMs);
        // Its hashing worker: nothing may run on after the server closed.
        await served?.deps.uploads.close();
        await served?.deps.pullThrough?.close();
      },
    } satisfies BoundRegistryServer;
  }
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
