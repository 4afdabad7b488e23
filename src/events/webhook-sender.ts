import http from "node:http";
import https from "node:https";

/** How one POST to a sink ended. */
export interface SendResult {
  ok: boolean;
  /** HTTP status; 0 when there was no response (connection error, timeout). */
  status: number;
  /** Why it failed ("" when ok), short enough to store and show. */
  error: string;
}

/** Sends one request to a sink. */
export type WebhookSender = (
  sink: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
) => Promise<SendResult>;

const MAX_ERROR_LENGTH = 300;

/**
 * A sender over node:http(s) with keep-alive connection pools (one per protocol). A 2xx answer is
 * success; anything else (redirects are not followed), a connection error or the time limit is a
 * failure. The response body is drained and discarded. `close` destroys pooled sockets.
 */
export function createWebhookSender(userAgent: string): { send: WebhookSender; close(): void } {
  const agents = {
    "http:": new http.Agent({ keepAlive: true, maxSockets: 64 }),
    "https:": new https.Agent({ keepAlive: true, maxSockets: 64 }),
  };
  const send: WebhookSender = (sink, headers, body, timeoutMs) =>
    new Promise((resolve) => {
      const url = new URL(sink);
      const agent = url.protocol === "https:" ? agents["https:"] : agents["http:"];
      const request = (url.protocol === "https:" ? https : http).request(url, {
        method: "POST",
        agent,
        headers: { ...headers, "user-agent": userAgent, "content-length": String(Buffer.byteLength(body)) },
        signal: AbortSignal.timeout(timeoutMs),
      });
      let settled = false;
      const finish = (result: SendResult) => {
        if (settled) return;
        settled = true;
        resolve(result);
      };
      request.on("response", (response) => {
        const status = response.statusCode ?? 0;
        response.resume();
        response.on("end", () =>
          finish(
            status >= 200 && status < 300
              ? { ok: true, status, error: "" }
              : { ok: false, status, error: `sink answered HTTP ${status}` },
          ),
        );
        response.on("error", (err) => finish({ ok: false, status, error: shorten(err) }));
      });
      request.on("error", (err) => finish({ ok: false, status: 0, error: shorten(err) }));
      request.end(body);
    });
  return {
    send,
    close() {
      agents["http:"].destroy();
      agents["https:"].destroy();
    },
  };
}

function shorten(err: Error): string {
  const message =
    err.name === "AbortError"
      ? "timed out"
      : `${(err as { code?: string }).code ?? err.name}: ${err.message}`;
  return message.length > MAX_ERROR_LENGTH ? `${message.slice(0, MAX_ERROR_LENGTH)}…` : message;
}
