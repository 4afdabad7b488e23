import { createGuardedConnector } from "./guarded-connector.js";
import type { SinkAddressPolicy } from "./sink-address-policy.js";
import type { SinkResolver } from "./sink-host.js";
import { Agent, type Dispatcher } from "./undici-client.js";

/** How one POST to a sink ended. */
export interface SendResult {
  ok: boolean;
  /** HTTP status; 0 when there was no response (connection error, timeout). */
  status: number;
  /** Why it failed ("" when ok), short enough to store and show. */
  error: string;
}

/** Sends one request to a sink; `signal`, when it aborts, ends the attempt at once as failed. */
export type WebhookSender = (
  sink: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  signal?: AbortSignal,
) => Promise<SendResult>;

const MAX_ERROR_LENGTH = 300;
/** Parsed sinks kept by a sender (there is one lane per subscription; this only bounds memory). */
const MAX_REMEMBERED_SINKS = 10_000;
/** Keep-alive connections per sink origin. */
const CONNECTIONS_PER_ORIGIN = 64;

/**
 * A sender over undici's keep-alive connection pools (one per sink origin, http or https). A 2xx
 * answer is success; anything else (redirects are not followed), a connection error or the time
 * limit is a failure. The limit covers the whole attempt (waiting for a connection, sending, the
 * answer and its body, which is discarded). `close` destroys the pooled sockets. Connections go
 * only to addresses `sinkAddresses.policy` allows (host names resolved with `sinkAddresses.resolve`
 * as the socket connects, see guarded-connector.ts); a refused one fails the attempt with the
 * reason, like a connection error.
 *
 * Built on undici's `dispatch` handler API rather than its `request`: one delivery costs ~50 µs of
 * CPU on a loopback sink (node:http ~75 µs, `request` with an AbortSignal for the limit ~65 µs)
 * on the 2-core bench machine, where a sink can take thousands per second.
 */
export function createWebhookSender(
  userAgent: string,
  sinkAddresses: { policy: SinkAddressPolicy; resolve: SinkResolver },
): { send: WebhookSender; close(): void } {
  const agent = new Agent({
    connections: CONNECTIONS_PER_ORIGIN,
    connect: createGuardedConnector(sinkAddresses.policy, sinkAddresses.resolve),
  });
  const targets = new Map<string, { origin: string; path: string }>();
  const targetOf = (sink: string) => {
    let target = targets.get(sink);
    if (!target) {
      const url = new URL(sink);
      target = { origin: url.origin, path: `${url.pathname}${url.search}` };
      if (targets.size >= MAX_REMEMBERED_SINKS) targets.clear();
      targets.set(sink, target);
    }
    return target;
  };
  const send: WebhookSender = (sink, headers, body, timeoutMs, signal) =>
    new Promise((resolve) => {
      let status = 0;
      let settled = false;
      /** Why the attempt was given up on (timed out, aborted), once it was. */
      let givenUp: string | undefined;
      let controller: Dispatcher.DispatchController | undefined;
      const finish = (result: SendResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener("abort", abort);
        resolve(result);
      };
      // A request still waiting for a connection has no controller yet: it is aborted as it starts.
      const giveUp = (error: string) => {
        givenUp = error;
        controller?.abort(new Error(error));
        finish({ ok: false, status: 0, error });
      };
      const timer = setTimeout(() => giveUp("timed out"), timeoutMs);
      const abort = () => giveUp("aborted");
      if (signal?.aborted) {
        abort();
        return;
      }
      signal?.addEventListener("abort", abort, { once: true });
      try {
        const { origin, path } = targetOf(sink);
        agent.dispatch(
          {
            origin,
            path,
            method: "POST",
            headers: { ...headers, "user-agent": userAgent },
            body,
            headersTimeout: timeoutMs,
            bodyTimeout: timeoutMs,
          },
          {
            onRequestStart(started) {
              controller = started;
              if (givenUp) started.abort(new Error(givenUp));
            },
            onResponseStart(_, statusCode) {
              status = statusCode;
            },
            onResponseData() {},
            onResponseEnd() {
              finish(
                status >= 200 && status < 300
                  ? { ok: true, status, error: "" }
                  : { ok: false, status, error: `sink answered HTTP ${status}` },
              );
            },
            onResponseError(_, err) {
              finish({ ok: false, status, error: givenUp ?? shorten(err) });
            },
          },
        );
      } catch (err) {
        finish({ ok: false, status: 0, error: shorten(err as Error) });
      }
    });
  return {
    send,
    close() {
      void agent.destroy().catch(() => {});
    },
  };
}

function shorten(err: Error): string {
  const code = (err as { code?: string }).code;
  const message = `${code ?? err.name}: ${err.message}`;
  return message.length > MAX_ERROR_LENGTH ? `${message.slice(0, MAX_ERROR_LENGTH)}…` : message;
}
