import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A plain-HTTP proxy on a free loopback port in front of `target` that holds every request whose
 * `<METHOD> <path>` matches `hold` until `open()` is called (those already held then proceed), so
 * a test can watch a replication run while it is still RUNNING. Everything else passes at once.
 */
export interface GateProxy {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** How many requests are waiting at the gate now. */
  held(): number;
  /** Lets the held requests and every later one through. */
  open(): void;
  close(): Promise<void>;
}

/** Starts the proxy, gate closed. */
export async function startGateProxy(target: string, hold: RegExp): Promise<GateProxy> {
  const to = new URL(target);
  let opened = false;
  const waiting: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const forward = () => {
      const upstream = request(
        {
          host: to.hostname,
          port: to.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: to.host },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", () => {
        if (res.headersSent) res.destroy();
        else res.writeHead(502, { "content-length": 0 }).end();
      });
      req.pipe(upstream);
    };
    if (!opened && hold.test(`${req.method} ${req.url}`)) waiting.push(forward);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    held: () => waiting.length,
    open: () => {
      opened = true;
      for (const go of waiting.splice(0)) go();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
