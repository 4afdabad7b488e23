import type { IncomingMessage } from "node:http";

/**
 * Reads a whole request body of at most `limit` bytes. Over the limit (by Content-Length up front,
 * or while streaming), `tooLarge` is called and the rest of the body is discarded.
 */
export async function readBody(req: IncomingMessage, limit: number, tooLarge: () => never): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? Number.NaN);
  if (declared > limit) {
    req.resume();
    tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      req.resume();
      tooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, size);
}
