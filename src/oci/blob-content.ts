import type { OutgoingHttpHeaders } from "node:http";
import { type BlobDriver, BlobNotFoundError, type BlobRange } from "../storage/blobs/blob-driver.js";
import { ContentLostError } from "./oci-errors.js";
import type { Exchange } from "./registry-request.js";

/**
 * Answers `status` with `headers` and no body once the blob driver confirms the object at `key`
 * exists (one `stat`: what HEAD, and a GET with nothing to send, do instead of trusting the
 * metadata). A missing object is {@link ContentLostError} `BLOB_UNKNOWN`; a failing stat rejects
 * with its own error (answered 500). Nothing is sent on failure.
 */
export async function sendBlobHead(
  blobs: BlobDriver,
  ex: Exchange,
  key: string,
  status: number,
  headers: OutgoingHttpHeaders,
): Promise<void> {
  if ((await blobs.stat(key)) === undefined) throw lost(key);
  ex.res.writeHead(status, headers);
  ex.res.end();
}

/**
 * Streams bytes `range` of the object at `key` as the answer `status` with `headers`. The headers
 * go out with the first bytes: the driver's `pipeTo` rejects before writing anything when the
 * object is missing or cannot be opened, and then this rejects with nothing sent and the
 * headers removed again, so the caller can still answer an error (a missing object is
 * {@link ContentLostError} `BLOB_UNKNOWN`, anything else keeps its error). A failure after the
 * first bytes rejects too; the driver has then destroyed the response.
 */
export async function sendBlobBytes(
  blobs: BlobDriver,
  ex: Exchange,
  key: string,
  status: number,
  headers: OutgoingHttpHeaders,
  range?: BlobRange,
): Promise<void> {
  const res = ex.res;
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) res.setHeader(name, value);
  try {
    await blobs.pipeTo(key, res, range);
  } catch (err) {
    if (res.headersSent) throw err;
    for (const name of Object.keys(headers)) res.removeHeader(name);
    res.statusCode = 200;
    throw err instanceof BlobNotFoundError ? lost(key) : err;
  }
}

function lost(key: string): ContentLostError {
  return new ContentLostError("the blob's content is missing from storage", key);
}
