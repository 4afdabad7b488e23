import type { OutgoingHttpHeaders } from "node:http";
import type { ByteRange, RegistryContent } from "../registry/data-plane/registry-content.js";
import type { Digest } from "../registry/digest.js";
import type { Exchange } from "./registry-request.js";

/**
 * Answers `status` with `headers` and no body once the blob store confirms the bytes of `digest`
 * exist (one `stat`: what HEAD, and a GET with nothing to send, do instead of trusting the
 * metadata). A missing object is ContentMissingError (answered as `ContentLostError`
 * `BLOB_UNKNOWN`), an object that is not `expectedSize` bytes ContentDamagedError (answered 500);
 * a failing stat rejects with its own error (answered 500). Nothing is sent on failure.
 */
export async function sendBlobHead(
  content: RegistryContent,
  ex: Exchange,
  digest: Digest,
  status: number,
  headers: OutgoingHttpHeaders,
  expectedSize?: number,
): Promise<void> {
  await content.requireBlobBytes(digest, expectedSize);
  ex.res.writeHead(status, headers);
  ex.res.end();
}

/**
 * Streams bytes `range` of blob `digest` as the answer `status` with `headers`. The headers go out
 * with the first bytes: the blob store rejects before writing anything when the object is missing
 * or cannot be opened, and then this rejects with nothing sent and the headers removed again, so
 * the caller can still answer an error (a missing object is ContentMissingError, answered as
 * `ContentLostError` `BLOB_UNKNOWN`; an object that is not `expectedSize` bytes is
 * ContentDamagedError, answered 500; anything else keeps its error). A failure after the
 * first bytes rejects too; the response has then been destroyed.
 */
export async function sendBlobBytes(
  content: RegistryContent,
  ex: Exchange,
  digest: Digest,
  status: number,
  headers: OutgoingHttpHeaders,
  range?: ByteRange,
  expectedSize?: number,
): Promise<void> {
  const res = ex.res;
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) res.setHeader(name, value);
  try {
    await content.pipeBlob(digest, res, range, expectedSize);
  } catch (err) {
    if (res.headersSent) throw err;
    for (const name of Object.keys(headers)) res.removeHeader(name);
    res.statusCode = 200;
    throw err;
  }
}
