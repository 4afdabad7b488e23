import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A plain-HTTP proxy on a free loopback port in front of `target` (`http://host:port`) that records
 * every request line it forwards (`GET /v2/library/app/blobs/sha256:…`), for tests that count what
 * reached an upstream. With `hold`, requests whose `<METHOD> <path>` matches wait at a gate until
 * `open()` (a test can watch a replication run while it is still RUNNING). When the target does not
 * answer it answers 502 itself.
 */
export interface CountingProxy {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** Every `<METHOD> <path>` forwarded (query strings included), oldest first. */
  requests: string[];
  /** How many recorded requests match `pattern`. */
  count(pattern: RegExp): number;
  /** How many requests are waiting at the gate now. */
  held(): number;
  /** Lets the held requests and every later one through. */
  open(): void;
  close(): Promise<void>;
}

/** Starts the proxy (with `hold`, its gate closed). */
export async function startCountingProxy(
  target: string,
  options: { hold?: RegExp } = {},
): Promise<CountingProxy> {
  const to = new URL(target);
  const requests: string[] = [];
  let opened = options.hold === undefined;
  const waiting: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const line = `${req.method} ${req.url}`;
    const forward = () => {
      requests.push(line);
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
    if (!opened && options.hold?.test(line)) waiting.push(forward);
    else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    count: (pattern) => requests.filter((r) => pattern.test(r)).length,
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
