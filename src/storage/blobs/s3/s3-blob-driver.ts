import { Readable, type Writable } from "node:stream";
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  S3Client,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import {
  assertValidBlobKey,
  type BlobDriver,
  type BlobExpectation,
  type BlobListEntry,
  BlobNotFoundError,
  type BlobRange,
  type BlobStat,
  checkBlobSize,
  pipeThroughRead,
  resolveBlobRange,
} from "../blob-driver.js";
import { validatingBlobDriver } from "../validating-blob-driver.js";
import {
  MAX_PART_NUMBER,
  mergeListing,
  parsePartKey,
  partKey,
  partsPrefix,
  type RawObject,
} from "./s3-layout.js";
import {
  copySource,
  emptyStream,
  isNotFound,
  isNotImplemented,
  MAX_COPY_SIZE,
  multipartCopy,
  seconds,
  slice,
} from "./s3-support.js";

/** Options of {@link createS3BlobDriver}. */
export interface S3BlobDriverOptions {
  /** Bucket name; the bucket must exist. */
  bucket: string;
  /** Key prefix inside the bucket (`wharf/blobs`): key `k` is stored as `<prefix>/k`. Default: none. */
  prefix?: string;
  /** Endpoint of an S3-compatible service (`http://127.0.0.1:9000`). Default: AWS for `region`. */
  endpoint?: string;
  /** Default: `AWS_REGION`, else `AWS_DEFAULT_REGION`, else `us-east-1`. */
  region?: string;
  /** Static credentials. Default: the AWS SDK's credential chain (environment, profile, IMDS, …). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Path-style URLs (`<endpoint>/<bucket>/<key>`). Default true (S3-compatible servers need it). */
  forcePathStyle?: boolean;
  /** Part size of multipart uploads (bytes, ≥ 5 MiB). Default 10 MiB: objects up to ~97 GiB. */
  partSize?: number;
  /** Parts uploaded concurrently per write. Default 4 (memory per write ≈ (queueSize + 1) × partSize). */
  queueSize?: number;
}

const MiB = 1024 * 1024;
/** S3's limits for multipart parts. */
const MIN_PART_SIZE = 5 * MiB;
const MAX_PARTS = 10_000;
const DELETE_BATCH = 1000;

/**
 * A {@link BlobDriver} over an S3 bucket (AWS or compatible: MinIO, Ceph, s3rver).
 *
 * `put` is one PutObject or multipart upload (via `@aws-sdk/lib-storage`, bounded memory), visible
 * atomically when it completes. `append` stores each chunk as its own object `<key>.parts/NNNNNNNN`
 * (see `s3-layout.ts`); `stat`, `read` and `list` present the chunks as one object. `commit` writes
 * `to` server-side when it can (CopyObject for a single chunk; a multipart UploadPartCopy when every
 * chunk but the last is ≥ 5 MiB), else by streaming the chunks through this process into a new
 * upload (smaller chunks, or a server answering NotImplemented, as s3rver does: then for good), and
 * then deletes the chunks.
 *
 * Requests per call: `put` = the upload + 1 LIST (dropping chunks of an earlier appendable object);
 * `append` = HEAD + LIST + PUT; `stat`/`read` = 1 request for a plain object (ranged `read`: HEAD +
 * GET), plus a LIST (and one GET per chunk read) for an appendable one; `delete` = DELETE + LIST.
 * Concurrent appends to one key are unsupported (they would race for a chunk number).
 *
 * The client always sends `requestChecksumCalculation`/`responseChecksumValidation` =
 * `WHEN_REQUIRED`: with the SDK's default, streamed uploads use aws-chunked framing with trailing
 * checksums, which some S3-compatible servers (s3rver) store verbatim inside the object.
 *
 * Arguments are checked by {@link validatingBlobDriver} before they reach it. Throws `TypeError` for
 * an invalid `prefix`.
 */
export function createS3BlobDriver(options: S3BlobDriverOptions): BlobDriver {
  return validatingBlobDriver(new S3BlobDriver(options));
}

/** Stores bytes only: its arguments were checked by the wrapper {@link createS3BlobDriver} adds. */
class S3BlobDriver implements BlobDriver {
  readonly kind = "s3";
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #root: string;
  readonly #partSize: number;
  readonly #queueSize: number;
  #partCopyUnsupported = false;

  constructor(options: S3BlobDriverOptions) {
    const prefix = (options.prefix ?? "").replace(/^\/+|\/+$/g, "");
    if (prefix !== "") assertValidBlobKey(prefix);
    this.#bucket = options.bucket;
    this.#root = prefix === "" ? "" : `${prefix}/`;
    this.#partSize = Math.max(options.partSize ?? 10 * MiB, MIN_PART_SIZE);
    this.#queueSize = Math.max(options.queueSize ?? 4, 1);
    this.#client = new S3Client({
      region: options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? "us-east-1",
      ...(options.endpoint !== undefined && { endpoint: options.endpoint }),
      ...(options.credentials !== undefined && { credentials: options.credentials }),
      forcePathStyle: options.forcePathStyle ?? true,
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  async stat(key: string): Promise<BlobStat | undefined> {
    const plain = await this.#head(key);
    if (plain !== undefined) return { size: plain.size, modifiedTime: plain.modifiedTime };
    const parts = await this.#parts(key);
    return parts.length === 0 ? undefined : total(parts);
  }

  pipeTo(key: string, sink: Writable, range?: BlobRange, expect?: BlobExpectation): Promise<void> {
    return pipeThroughRead(this, key, sink, range, expect);
  }

  async read(key: string, range?: BlobRange, expect?: BlobExpectation): Promise<Readable> {
    if (range === undefined || (range.start === 0 && range.end === undefined)) {
      // The common case in one request; a missing plain object may still be appendable. The
      // response's Content-Length is the object's size: checked before a byte is handed out.
      const body = await this.#get(this.#key(key), undefined, undefined, undefined, (size) =>
        checkBlobSize(key, size, expect),
      ).catch((err) => {
        if (isNotFound(err)) return undefined;
        throw err;
      });
      if (body !== undefined) return body;
    } else {
      const plain = await this.#head(key);
      if (plain !== undefined) {
        checkBlobSize(key, plain.size, expect);
        const { start, end } = resolveBlobRange(key, plain.size, range);
        return start === end ? emptyStream() : this.#get(this.#key(key), start, end, plain.etag);
      }
    }
    const parts = await this.#parts(key);
    if (parts.length === 0) throw new BlobNotFoundError(key);
    checkBlobSize(key, total(parts).size, expect);
    const { start, end } = resolveBlobRange(key, total(parts).size, range);
    return Readable.from(this.#readParts(parts, start, end), { objectMode: false });
  }

  async put(key: string, source: Readable): Promise<number> {
    const written = await this.#upload(this.#key(key), source);
    await this.#deleteParts(key); // an earlier appendable object, hidden by the plain one from now on
    return written;
  }

  async append(key: string, source: Readable): Promise<number> {
    let parts: Part[];
    try {
      const [plain, existing] = await Promise.all([this.#head(key), this.#parts(key)]);
      parts = plain === undefined ? existing : await this.#toParts(key, plain, existing);
      if ((parts.at(-1)?.number ?? 0) >= MAX_PART_NUMBER) {
        throw new RangeError(`${key} already has ${MAX_PART_NUMBER} appended chunks`);
      }
    } catch (err) {
      source.destroy();
      throw err;
    }
    const number = (parts.at(-1)?.number ?? 0) + 1;
    const written = await this.#upload(partKey(this.#key(key), number), source);
    return total(parts).size + written;
  }

  async commit(from: string, to: string): Promise<void> {
    const [plain, parts] = await Promise.all([this.#head(from), this.#parts(from)]);
    if (plain !== undefined) {
      await this.#copy({ key: this.#key(from), size: plain.size, etag: plain.etag }, this.#key(to));
      await this.#deleteRaw([this.#key(from), ...parts.map((p) => p.key)]);
    } else {
      if (parts.length === 0) throw new BlobNotFoundError(from);
      await this.#concat(parts, this.#key(to));
      await this.#deleteRaw(parts.map((p) => p.key));
    }
    await this.#deleteParts(to);
  }

  async delete(key: string): Promise<void> {
    await Promise.all([
      this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) })),
      this.#deleteParts(key),
    ]);
  }

  list(prefix: string): AsyncIterable<BlobListEntry> {
    return mergeListing(this.#listRaw(prefix), prefix);
  }

  async close(): Promise<void> {
    this.#client.destroy();
  }

  #key(key: string): string {
    return this.#root + key;
  }

  async #head(key: string): Promise<(BlobStat & { etag: string | undefined }) | undefined> {
    try {
      const out = await this.#client.send(
        new HeadObjectCommand({ Bucket: this.#bucket, Key: this.#key(key) }),
      );
      return { size: out.ContentLength ?? 0, modifiedTime: seconds(out.LastModified), etag: out.ETag };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /**
   * The body of `fullKey`, bytes `[start, end)` when given (assumed within the object). A server that
   * answers a range with other bytes than asked (s3rver serves all of `bytes=0-0`; others ignore
   * Range) is corrected here from its Content-Range, so callers always get exactly the range.
   */
  async #get(
    fullKey: string,
    start?: number,
    end?: number,
    etag?: string,
    /** Told the whole object's size (Content-Length of an unranged GET) before the body is returned; may throw. */
    checkSize?: (size: number) => void,
  ): Promise<Readable> {
    const ranged = start !== undefined && end !== undefined;
    const out = await this.#client.send(
      new GetObjectCommand({
        Bucket: this.#bucket,
        Key: fullKey,
        ...(ranged && { Range: `bytes=${start}-${end - 1}` }),
        ...(etag !== undefined && { IfMatch: etag }),
      }),
    );
    const body = out.Body === undefined ? emptyStream() : (out.Body as Readable);
    if (checkSize !== undefined && !ranged) {
      try {
        checkSize(out.ContentLength ?? 0);
      } catch (err) {
        body.destroy();
        throw err;
      }
    }
    if (!ranged || out.ContentLength === end - start) return body;
    const servedFrom = Number(/^bytes (\d+)-/.exec(out.ContentRange ?? "")?.[1] ?? 0);
    if (servedFrom > start) {
      body.destroy();
      throw new Error(`S3 served ${out.ContentRange} of ${fullKey} for bytes ${start}-${end - 1}`);
    }
    return Readable.from(slice(body, start - servedFrom, end - start), { objectMode: false });
  }

  async *#readParts(parts: Part[], start: number, end: number): AsyncGenerator<Buffer> {
    let offset = 0;
    for (const part of parts) {
      const from = Math.max(start - offset, 0);
      const to = Math.min(end - offset, part.size);
      if (from < to) {
        const whole = from === 0 && to === part.size;
        const body = await (whole ? this.#get(part.key) : this.#get(part.key, from, to));
        try {
          for await (const chunk of body) yield chunk as Buffer;
        } finally {
          body.destroy();
        }
      }
      offset += part.size;
      if (offset >= end) return;
    }
  }

  /**
   * Uploads `source` to `fullKey` (atomic on completion); resolves with the byte count. When the
   * source fails, rejects with the source's error (not with whatever the abandoned upload caused).
   */
  async #upload(fullKey: string, source: Readable): Promise<number> {
    let bytes = 0;
    let sourceError: unknown;
    async function* counted(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of source) {
          const buffer = typeof chunk === "string" ? Buffer.from(chunk) : (chunk as Buffer);
          bytes += buffer.length;
          yield buffer;
        }
      } catch (err) {
        sourceError = err;
        throw err;
      }
    }
    const body = Readable.from(counted(), { objectMode: false });
    try {
      await new Upload({
        client: this.#client,
        params: { Bucket: this.#bucket, Key: fullKey, Body: body },
        partSize: this.#partSize,
        queueSize: this.#queueSize,
        leavePartsOnError: false,
      }).done();
    } catch (err) {
      body.destroy();
      source.destroy();
      throw sourceError ?? err;
    }
    return bytes;
  }

  /** The chunks of `key`, in order. */
  async #parts(key: string): Promise<Part[]> {
    const parts: Part[] = [];
    for await (const page of this.#listRaw(partsPrefix(key))) {
      for (const raw of page) {
        const parsed = parsePartKey(raw.key);
        if (parsed?.key === key) parts.push({ ...raw, key: this.#key(raw.key), number: parsed.number });
      }
    }
    return parts.sort((a, b) => a.number - b.number);
  }

  /** Pages of the raw objects whose root-relative key starts with `prefix` (keys root-relative). */
  async *#listRaw(prefix: string): AsyncGenerator<(RawObject & { etag: string | undefined })[]> {
    let token: string | undefined;
    do {
      const out = await this.#client.send(
        new ListObjectsV2Command({
          Bucket: this.#bucket,
          Prefix: this.#key(prefix),
          ContinuationToken: token,
        }),
      );
      yield (out.Contents ?? [])
        .filter((o) => o.Key?.startsWith(this.#root))
        .map((o) => ({
          key: o.Key!.slice(this.#root.length),
          size: o.Size ?? 0,
          modifiedTime: seconds(o.LastModified),
          etag: o.ETag,
        }));
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token !== undefined);
  }

  /** Turns the plain object `key` into chunk 1 (dropping stale chunks), so appends can follow it. */
  async #toParts(
    key: string,
    plain: BlobStat & { etag: string | undefined },
    stale: Part[],
  ): Promise<Part[]> {
    await this.#deleteRaw(stale.map((p) => p.key));
    const first = partKey(this.#key(key), 1);
    await this.#copy({ key: this.#key(key), size: plain.size, etag: plain.etag }, first);
    await this.#deleteRaw([this.#key(key)]);
    return [{ key: first, number: 1, size: plain.size, modifiedTime: plain.modifiedTime, etag: undefined }];
  }

  /** Copies one object server-side (streams it through this process beyond CopyObject's 5 GiB). */
  async #copy(source: { key: string; size: number; etag: string | undefined }, toKey: string): Promise<void> {
    if (source.size > MAX_COPY_SIZE) {
      await this.#upload(toKey, await this.#get(source.key, undefined, undefined, source.etag));
      return;
    }
    await this.#client.send(
      new CopyObjectCommand({
        Bucket: this.#bucket,
        Key: toKey,
        CopySource: copySource(this.#bucket, source.key),
        ...(source.etag !== undefined && { CopySourceIfMatch: source.etag }),
      }),
    );
  }

  /** Writes the concatenation of `parts` to `toKey`, atomically. */
  async #concat(parts: Part[], toKey: string): Promise<void> {
    const nonEmpty = parts.filter((p) => p.size > 0);
    if (nonEmpty.length === 0) {
      await this.#upload(toKey, emptyStream());
      return;
    }
    if (nonEmpty.length === 1) {
      await this.#copy(nonEmpty[0]!, toKey);
      return;
    }
    const copyable =
      nonEmpty.length <= MAX_PARTS &&
      nonEmpty.every(
        (p, i) => p.size <= MAX_COPY_SIZE && (i === nonEmpty.length - 1 || p.size >= MIN_PART_SIZE),
      );
    if (copyable && !this.#partCopyUnsupported) {
      try {
        await multipartCopy(this.#client, this.#bucket, nonEmpty, toKey);
        return;
      } catch (err) {
        if (!isNotImplemented(err)) throw err;
        this.#partCopyUnsupported = true; // e.g. s3rver: stream from now on
      }
    }
    const total = nonEmpty.reduce((n, p) => n + p.size, 0);
    await this.#upload(toKey, Readable.from(this.#readParts(nonEmpty, 0, total), { objectMode: false }));
  }

  async #deleteParts(key: string): Promise<void> {
    await this.#deleteRaw((await this.#parts(key)).map((p) => p.key));
  }

  /** Deletes full S3 keys (missing ones are fine), in batches. */
  async #deleteRaw(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      const out = await this.#client.send(
        new DeleteObjectsCommand({
          Bucket: this.#bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
      const failed = out.Errors ?? [];
      if (failed.length > 0) {
        throw new Error(
          `S3 DeleteObjects failed for ${failed.length} key(s): ${failed[0]?.Code} ${failed[0]?.Message}`,
        );
      }
    }
  }
}

/** One appended chunk: its full S3 key, number, size, mtime, ETag. */
interface Part extends RawObject {
  number: number;
  etag: string | undefined;
}

function total(parts: RawObject[]): BlobStat {
  return {
    size: parts.reduce((n, p) => n + p.size, 0),
    modifiedTime: parts.reduce((t, p) => Math.max(t, p.modifiedTime), 0),
  };
}
