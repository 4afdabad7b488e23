import type { Readable } from "node:stream";
import { RemoteError } from "./remote-registry.js";
import { isTimeout } from "./remote-transport.js";

/**
 * Reads all of `body`, refusing more than `limit` bytes with `too-large` (at once when the declared
 * `Content-Length` says so, else as soon as the bytes run past it: nothing more is read). A body
 * shorter than declared is `truncated`; other read errors become what `mapError` says.
 */
export async function readCapped(
  body: Readable,
  limit: number,
  declared: number | undefined,
  what: string,
  mapError: (err: unknown) => unknown,
): Promise<Buffer> {
  if (declared !== undefined && declared > limit) {
    body.on("error", () => undefined);
    body.destroy();
    throw new RemoteError("too-large", `${what}: ${declared} bytes, more than the ${limit} accepted`);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const buf = chunk as Buffer;
      size += buf.length;
      if (size > limit) {
        throw new RemoteError("too-large", `${what}: more than the ${limit} bytes accepted`);
      }
      chunks.push(buf);
    }
  } catch (err) {
    body.on("error", () => undefined);
    body.destroy();
    if (err instanceof RemoteError) throw err;
    const mapped = mapError(err);
    // A short body is `truncated` unless the caller gave up (its abort reason) or the remote stalled.
    if (declared !== undefined && size < declared && mapped instanceof RemoteError && !isTimeout(err)) {
      throw new RemoteError("truncated", `${what}: the body stopped after ${size} of ${declared} bytes`);
    }
    throw mapped;
  }
  if (declared !== undefined && size < declared) {
    throw new RemoteError("truncated", `${what}: the body stopped after ${size} of ${declared} bytes`);
  }
  return Buffer.concat(chunks, size);
}

/** A `Content-Length` value as a number; undefined when absent or not a plain non-negative integer. */
export function contentLength(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,15}$/.test(value.trim())) return undefined;
  return Number(value.trim());
}
