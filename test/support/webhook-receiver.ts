import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the receiver got. */
export interface ReceivedDelivery {
  /** The request path (subscriptions to one receiver can use different paths). */
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status the receiver answered. */
  status: number;
  /** performance.now() when the request had arrived whole. */
  arrivedAt: number;
  /** The sender's TCP port (tells one sending process's connections from another's). */
  remotePort: number;
}

/** A real HTTP webhook receiver on loopback that records every delivery. */
export interface WebhookReceiver {
  /** `http://127.0.0.1:<port><path>`. */
  url(path?: string): string;
  /** Every request so far, in arrival order (including the ones answered with an error). */
  received: ReceivedDelivery[];
  /** The deliveries answered 2xx. */
  accepted(): ReceivedDelivery[];
  /**
   * Answers the next requests with `status` (default 200) until changed, `delayMs` after they
   * arrived (default 0); "hang" never answers.
   */
  respondWith(status: number | "hang", delayMs?: number): void;
  /** Requests answered so far (a delayed answer counts once written). */
  answered(): number;
  /** The most requests that were open (arrived, not answered) at once. */
  maxOpen(): number;
  /** Resolves once `predicate` holds for the accepted deliveries, or rejects after `timeoutMs`. */
  waitFor(
    predicate: (accepted: ReceivedDelivery[]) => boolean,
    timeoutMs?: number,
  ): Promise<ReceivedDelivery[]>;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1 with a free port. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedDelivery[] = [];
  let status: number | "hang" = 200;
  let delay = 0;
  let answered = 0;
  let open = 0;
  let maxOpen = 0;
  const waiters = new Set<() => void>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const answer = status;
      received.push({
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        status: answer === "hang" ? 0 : answer,
        arrivedAt: performance.now(),
        remotePort: req.socket.remotePort ?? 0,
      });
      open++;
      maxOpen = Math.max(maxOpen, open);
      res.once("close", () => open--);
      if (answer !== "hang") {
        const respond = () => {
          if (res.destroyed) return;
          res.writeHead(answer, { "content-type": "text/plain" }).end(answer < 300 ? "ok" : "no", () => {
            answered++;
          });
        };
        if (delay > 0) setTimeout(respond, delay);
        else respond();
      }
      for (const wake of waiters) wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const accepted = () => received.filter((r) => r.status >= 200 && r.status < 300);
  return {
    url: (path = "/hook") => `http://127.0.0.1:${port}${path}`,
    received,
    accepted,
    respondWith(next, delayMs = 0) {
      status = next;
      delay = delayMs;
    },
    answered: () => answered,
    maxOpen: () => maxOpen,
    waitFor(predicate, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!predicate(accepted())) return;
          cleanup();
          resolve(accepted());
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(
              `webhook receiver: condition not met in ${timeoutMs} ms; accepted ${accepted().length} of ${received.length}: ${accepted()
                .map((r) => r.headers["ce-type"])
                .join(", ")}`,
            ),
          );
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
