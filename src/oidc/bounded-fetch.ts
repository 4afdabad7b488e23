import { ExternalTokenError } from "./external-token-error.js";

/** Limits of every request Wharf makes to an upstream issuer (discovery and key set). */
export interface FetchLimits {
  /** Abort a request (connect, headers and body) after this many milliseconds. Default 5,000. */
  timeoutMs?: number;
  /** Refuse responses larger than this many bytes. Default 256 KiB. */
  maxBytes?: number;
  /** The fetch implementation (tests); default the global fetch. */
  fetch?: typeof fetch;
}

export const DEFAULT_FETCH_TIMEOUT_MS = 5_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024;

/**
 * GETs `url` without following redirects, within the time and size limits, and returns the body
 * (at most `maxBytes`) as a Response that can be read again (for jose's remote key set). Anything
 * but 200 fails. Throws ExternalTokenError with a caller-safe reason naming the URL.
 */
export async function boundedGet(
  url: string,
  limits: FetchLimits = {},
  signal?: AbortSignal,
): Promise<Response> {
  const timeoutMs = limits.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const maxBytes = limits.maxBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const timeout = AbortSignal.timeout(timeoutMs);
  const abort = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let response: Response;
  try {
    response = await (limits.fetch ?? fetch)(url, {
      method: "GET",
      redirect: "manual",
      signal: abort,
      headers: { accept: "application/json" },
    });
  } catch (err) {
    const timedOut = timeout.aborted || (err as Error).name === "TimeoutError";
    throw new ExternalTokenError(
      timedOut ? `fetching ${url} timed out after ${timeoutMs} ms` : `fetching ${url} failed`,
      { unavailable: true },
    );
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => {});
    throw new ExternalTokenError(`fetching ${url}: HTTP ${response.status}`, { unavailable: true });
  }
  const body = await readBoundedBody(response, url, maxBytes);
  return new Response(body, {
    status: 200,
    headers: { "content-type": response.headers.get("content-type") ?? "application/json" },
  });
}

/**
 * Reads the body of `response` (a request to `url`), refusing more than `maxBytes` — declared or
 * received — without buffering the excess. Throws ExternalTokenError naming the URL.
 */
export async function readBoundedBody(response: Response, url: string, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new ExternalTokenError(`fetching ${url}: response larger than ${maxBytes} bytes`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    const reader = response.body?.getReader();
    for (;;) {
      const next = await reader?.read();
      if (!next || next.done) break;
      size += next.value.byteLength;
      if (size > maxBytes) {
        await reader?.cancel().catch(() => {});
        throw new ExternalTokenError(`fetching ${url}: response larger than ${maxBytes} bytes`);
      }
      chunks.push(next.value);
    }
  } catch (err) {
    if (err instanceof ExternalTokenError) throw err;
    throw new ExternalTokenError(`fetching ${url}: reading the response failed`, { unavailable: true });
  }
  return Buffer.concat(chunks);
}

/** `boundedGet` and parse the body as a JSON object; a non-object is an ExternalTokenError. */
export async function boundedGetJson(
  url: string,
  limits: FetchLimits = {},
): Promise<Record<string, unknown>> {
  const response = await boundedGet(url, limits);
  let parsed: unknown;
  try {
    parsed = JSON.parse(await response.text());
  } catch {
    throw new ExternalTokenError(`fetching ${url}: the response is not JSON`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new ExternalTokenError(`fetching ${url}: the response is not a JSON object`);
  }
  return parsed as Record<string, unknown>;
}
