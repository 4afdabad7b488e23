import { isIP } from "node:net";
import type { Readable } from "node:stream";
import { createGuardedConnector, SinkAddressRefused } from "../../events/guarded-connector.js";
import type { SinkAddressPolicy } from "../../events/sink-address-policy.js";
import { type SinkResolver, sinkHostOf } from "../../events/sink-host.js";
import { Agent } from "../../events/undici-client.js";
import type { RateLimitGate } from "./rate-limit-gate.js";
import { RemoteError } from "./remote-registry.js";

/** Redirects followed for one request (blob GETs redirect to object stores and CDNs). */
export const MAX_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Bytes of a redirect's body drained so its connection can be reused; a longer one is cut. */
const DRAIN_BYTES = 16 * 1024;
/** What Wharf calls itself to remotes (registries log it; Docker Hub counts pulls by it). */
const USER_AGENT = "wharf-remote-registry-client";
/** Keep-alive connections per remote origin. */
const CONNECTIONS_PER_ORIGIN = 16;

/** One HTTP request to a remote. */
export interface RemoteRequest {
  method: "GET" | "HEAD" | "POST" | "PUT" | "DELETE";
  url: URL;
  headers: Record<string, string>;
  body?: Uint8Array | Readable | undefined;
  /** Follow redirects (GET and HEAD). */
  follow?: boolean;
  signal?: AbortSignal | undefined;
  /** Names the call in errors: remote URL and repo, never credentials. */
  what: string;
}

/** The answer: `url` is the one that answered (after redirects). The caller consumes or destroys `body`. */
export interface RemoteResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable;
  url: URL;
}

/** Sends requests to remotes under the address policy. */
export interface RemoteTransport {
  send(request: RemoteRequest): Promise<RemoteResponse>;
  close(): Promise<void>;
}

/** What a transport needs. */
export interface RemoteTransportOptions {
  policy: SinkAddressPolicy;
  resolve: SinkResolver;
  allowHttp: boolean;
  timeoutMs: number;
  gate: RateLimitGate;
}

/**
 * Lets go of an answer's body without reading it: drains a little (so the connection is reused),
 * else destroys it. undici bodies error when destroyed unread; that error is expected here.
 */
export function discard(body: Readable): void {
  body.on("error", () => undefined);
  const dump = (body as Readable & { dump?: (o: { limit: number }) => Promise<void> }).dump;
  if (dump) dump.call(body, { limit: DRAIN_BYTES }).catch(() => undefined);
  else body.destroy();
}

/** The first value of a header. */
export function header(headers: RemoteResponse["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Why `url` may not be requested: not http(s), plain http without `allowHttp`, credentials in it,
 * or an address host the policy refuses (host names are checked as they resolve, by the connector).
 * Undefined when it may.
 */
export function urlRefusal(url: URL, allowHttp: boolean, policy: SinkAddressPolicy): string | undefined {
  if (url.protocol !== "https:" && url.protocol !== "http:") return `${url.protocol} is not http(s)`;
  if (url.protocol === "http:" && !allowHttp) {
    return `${url.origin} is plain http, which the server refuses (--events-allow-http allows it)`;
  }
  if (url.username !== "" || url.password !== "") return "a URL may not carry credentials";
  const host = sinkHostOf(url);
  if (isIP(host) !== 0) {
    const what = policy.refusalOf(host);
    if (what !== undefined) {
      return `${host} is ${what}, which remote registries may not reach (the server's ${policy.exceptionFor(host)} can allow it)`;
    }
  }
  return undefined;
}

/**
 * A transport over one undici Agent whose connector checks every connection's resolved address
 * (guarded-connector.ts). Redirects are followed by hand (at most MAX_REDIRECTS), each hop
 * checked by urlRefusal; the Authorization header is dropped once a hop leaves the first origin.
 * A 429 closes `gate` and fails with `rate-limited`; while it is closed nothing is sent. Network
 * failures and timeouts (`timeoutMs` for headers and between body chunks) are `unreachable`; an
 * aborted `signal` rethrows its reason.
 */
export function createRemoteTransport(options: RemoteTransportOptions): RemoteTransport {
  const agent = new Agent({
    connections: CONNECTIONS_PER_ORIGIN,
    connect: createGuardedConnector(options.policy, options.resolve),
  });
  const send = async (request: RemoteRequest): Promise<RemoteResponse> => {
    let url = request.url;
    let headers = request.headers;
    for (let hop = 0; ; hop++) {
      const where = hop === 0 ? request.what : `${request.what} (redirected to ${url.origin})`;
      const refusal = urlRefusal(url, options.allowHttp, options.policy);
      if (refusal !== undefined) throw new RemoteError("address-refused", `${where}: ${refusal}`);
      options.gate.check(where);
      let answer: Awaited<ReturnType<typeof agent.request>>;
      try {
        answer = await agent.request({
          origin: url.origin,
          path: `${url.pathname}${url.search}`,
          method: request.method,
          headers: { "user-agent": USER_AGENT, ...headers },
          body: request.body ?? null,
          signal: request.signal ?? null,
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
        });
      } catch (err) {
        throw networkError(err, where, request.signal);
      }
      const { statusCode: status, headers: answered, body } = answer;
      if (status === 429) {
        discard(body);
        const ms = options.gate.close(header(answered, "retry-after"));
        throw new RemoteError(
          "rate-limited",
          `${where}: HTTP 429, the remote asks to wait ${Math.ceil(ms / 1000)} s`,
          429,
          ms,
        );
      }
      if (!request.follow || !REDIRECT_STATUSES.has(status)) return { status, headers: answered, body, url };
      discard(body);
      if (hop >= MAX_REDIRECTS) {
        throw new RemoteError(
          "invalid-response",
          `${request.what}: more than ${MAX_REDIRECTS} redirects`,
          status,
        );
      }
      const location = header(answered, "location");
      let next: URL;
      try {
        next = new URL(location ?? "", url);
      } catch {
        next = url;
      }
      if (location === undefined || location === "" || next.href === url.href) {
        throw new RemoteError(
          "invalid-response",
          `${where}: HTTP ${status} without a usable Location`,
          status,
        );
      }
      // Credentials are for the registry, not for the storage or CDN it sends the client to.
      if (next.origin !== url.origin) headers = withoutAuthorization(headers);
      url = next;
    }
  };
  return {
    send,
    async close() {
      await agent.close();
    },
  };
}

function withoutAuthorization(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name]) => name.toLowerCase() !== "authorization"),
  );
}

const TIMEOUT_CODES = new Set(["UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT", "UND_ERR_CONNECT_TIMEOUT"]);

/** Whether `err` is undici's timeout (no headers, or no body bytes, in time): the remote is slow, not short. */
export function isTimeout(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && TIMEOUT_CODES.has(code);
}

/**
 * The RemoteError for a request that got no answer. The address policy's refusals come from the
 * webhook sinks' connector, which words them for sinks: said here for remotes.
 */
export function networkError(err: unknown, where: string, signal?: AbortSignal): unknown {
  if (signal?.aborted) return signal.reason ?? err;
  if (err instanceof RemoteError) return err;
  if (err instanceof SinkAddressRefused) {
    const why = err.message
      .replace(/^sink host /, "host ")
      .replace("which webhooks may", "which remote registries may");
    return new RemoteError("address-refused", `${where}: ${why}`);
  }
  const code = (err as { code?: unknown })?.code;
  if (isTimeout(err)) return new RemoteError("unreachable", `${where}: timed out (${String(code)})`);
  const message = err instanceof Error ? err.message : String(err);
  return new RemoteError(
    "unreachable",
    `${where}: ${typeof code === "string" ? `${code} ` : ""}${message}`.trim(),
  );
}
