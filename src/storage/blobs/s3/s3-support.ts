import { Readable } from "node:stream";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  type S3Client,
  UploadPartCopyCommand,
} from "@aws-sdk/client-s3";

/** The largest source CopyObject and UploadPartCopy accept (5 GiB). */
export const MAX_COPY_SIZE = 5 * 1024 * 1024 * 1024;
const COPY_CONCURRENCY = 4;

/** The `x-amz-copy-source` value of `key` in `bucket` (each segment URL-encoded). */
export function copySource(bucket: string, key: string): string {
  return `${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`;
}

/**
 * Writes the concatenation of `parts` (full keys; every part but the last ≥ 5 MiB, each ≤ 5 GiB,
 * at most 10 000) to `toKey` server-side: a multipart upload of UploadPartCopy parts, visible
 * atomically on completion, aborted on failure. `etag`s guard against a part changing meanwhile.
 * Rejects with the server's error (NotImplemented on servers without UploadPartCopy).
 */
export async function multipartCopy(
  client: S3Client,
  bucket: string,
  parts: { key: string; etag: string | undefined }[],
  toKey: string,
): Promise<void> {
  const target = { Bucket: bucket, Key: toKey };
  const { UploadId } = await client.send(new CreateMultipartUploadCommand(target));
  try {
    const etags = await mapLimit(parts, COPY_CONCURRENCY, async (part, i) => {
      const out = await client.send(
        new UploadPartCopyCommand({
          ...target,
          UploadId,
          PartNumber: i + 1,
          CopySource: copySource(bucket, part.key),
          ...(part.etag !== undefined && { CopySourceIfMatch: part.etag }),
        }),
      );
      return { PartNumber: i + 1, ETag: out.CopyPartResult?.ETag };
    });
    await client.send(
      new CompleteMultipartUploadCommand({ ...target, UploadId, MultipartUpload: { Parts: etags } }),
    );
  } catch (err) {
    await client.send(new AbortMultipartUploadCommand({ ...target, UploadId })).catch(() => {});
    throw err;
  }
}

/** Whole-second ms: HeadObject's Last-Modified has seconds, ListObjectsV2's may have ms. */
export function seconds(date: Date | undefined): number {
  return date === undefined ? 0 : Math.floor(date.getTime() / 1000) * 1000;
}

/** `length` bytes of `body` after skipping `skip`; destroys `body` when done. */
export async function* slice(body: Readable, skip: number, length: number): AsyncGenerator<Buffer> {
  try {
    for await (const chunk of body) {
      const buffer = chunk as Buffer;
      const from = Math.min(skip, buffer.length);
      skip -= from;
      const piece = buffer.subarray(from, from + length);
      length -= piece.length;
      if (piece.length > 0) yield piece;
      if (length === 0) return;
    }
    if (length > 0) throw new Error("S3 response ended before the requested range");
  } finally {
    body.destroy();
  }
}

/** An empty byte stream. */
export function emptyStream(): Readable {
  return Readable.from([], { objectMode: false });
}

interface S3ErrorShape {
  name?: string;
  Code?: string;
  $metadata?: { httpStatusCode?: number };
}

/** A missing key (HeadObject answers a bare 404 "NotFound"; a missing bucket is not this). */
export function isNotFound(err: unknown): boolean {
  const e = err as S3ErrorShape | undefined;
  if (e?.name === "NoSuchBucket") return false;
  return e?.name === "NotFound" || e?.name === "NoSuchKey" || e?.$metadata?.httpStatusCode === 404;
}

/** The server does not implement the operation (s3rver: UploadPartCopy). */
export function isNotImplemented(err: unknown): boolean {
  const e = err as S3ErrorShape | undefined;
  return e?.name === "NotImplemented" || e?.Code === "NotImplemented" || e?.$metadata?.httpStatusCode === 501;
}

/** `fn` over `items` with at most `limit` calls in flight; results in input order. */
async function mapLimit<T, R>(
  items: T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
