import { Code } from "@connectrpc/connect";
import { errorOfResponse, WharfApiError } from "./errors.js";

/** The fetch the SDK uses for its plain-HTTP calls (the global one unless given). */
export type FetchFunction = typeof globalThis.fetch;

/** Sends a request and answers its Response, whatever the status; no answer at all is UNAVAILABLE. */
export async function fetchOrUnavailable(
  fetchFn: FetchFunction,
  url: string | URL,
  init: RequestInit,
): Promise<Response> {
  try {
    return await fetchFn(url, init);
  } catch (err) {
    if (init.signal?.aborted) throw err;
    throw new WharfApiError({
      code: Code.Unavailable,
      message: `${init.method ?? "GET"} ${String(url)}: ${(err as Error).message}`,
      cause: err,
    });
  }
}

/**
 * Sends a request and answers the Response when it is 2xx; otherwise rejects with the decoded
 * {@link WharfApiError}. A request that gets no answer at all is UNAVAILABLE.
 */
export async function send(fetchFn: FetchFunction, url: string | URL, init: RequestInit): Promise<Response> {
  const response = await fetchOrUnavailable(fetchFn, url, init);
  if (!response.ok) throw await errorOfResponse(response);
  return response;
}

/** {@link send}, then the JSON body. */
export async function sendForJson<T>(
  fetchFn: FetchFunction,
  url: string | URL,
  init: RequestInit,
): Promise<T> {
  const response = await send(fetchFn, url, init);
  return (await response.json()) as T;
}

/** `authorization: Bearer <token>`, or nothing for an empty token. */
export function bearer(token: string): Record<string, string> {
  return token ? { authorization: `Bearer ${token}` } : {};
}
