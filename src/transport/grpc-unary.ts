import type {
  Http2ServerRequest,
  Http2ServerResponse,
  IncomingHttpHeaders,
  ServerHttp2Stream,
} from "node:http2";
import type { Readable } from "node:stream";
import { create, fromBinary, type Message } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { type BinaryEncoder, binaryEncoderFor } from "../codec/binary-encoder.js";
import { deadlineExceeded } from "../core/cancellation.js";
import { DomainError } from "../core/errors.js";
import { bodyTooLarge, errorHeaders, toStatusBinary } from "./error-mapping.js";
import { encodeGrpcMessage } from "./grpc-message-encoding.js";
import { grpcTimeoutMs } from "./grpc-timeout.js";
import type { MethodEntry } from "./method-table.js";
import type { CallRecord, Pipeline } from "./pipeline.js";

/** Options of {@link createGrpcUnary}. */
export interface GrpcUnaryOptions {
  methods: readonly MethodEntry[];
  pipeline: Pipeline;
  maxBodyBytes: number;
}

/** Serves unary gRPC calls (HTTP/2, `application/grpc[+proto]`) of the bound methods. */
export interface GrpcUnary {
  /** True when this request is a unary gRPC call of a bound method that this path serves. */
  accepts(path: string, httpVersionMajor: number, contentType: string | undefined): boolean;
  handle(req: Http2ServerRequest, res: Http2ServerResponse, record: CallRecord): void;
  /**
   * The same on node's raw stream API (no compatibility request/response objects): what the API
   * listener uses for calls `accepts` takes. `record` is begun; the caller finishes it on close.
   */
  handleStream(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, record: CallRecord): void;
}

const GRPC_CONTENT_TYPES = new Set(["application/grpc", "application/grpc+proto"]);

/**
 * A direct unary gRPC path: one length-prefixed request message in, one out, status in trailers
 * (or trailers-only for errors), `grpc-status-details-bin` carrying the same typed details as REST;
 * a rate-limited call's headers (ADR 0043) go in the response headers of either.
 * Connect's generic gRPC handler measured ~8× slower per call here (abort signals, async iterables
 * per request); Connect still serves gRPC-Web, the Connect protocol, reflection and compressed calls.
 */
export function createGrpcUnary(options: GrpcUnaryOptions): GrpcUnary {
  const byPath = new Map(options.methods.map((m) => [m.rpcPath, m]));
  const encoders = new Map<MethodEntry, BinaryEncoder>(
    options.methods.map((m) => [m, binaryEncoderFor(m.method.output)]),
  );
  const { pipeline, maxBodyBytes } = options;

  // The raw stream API: a trailers-only error must be ONE HEADERS frame with END_STREAM, which
  // the compatibility API cannot send.
  function fail(
    stream: ServerHttp2Stream,
    requestId: string,
    contentType: string,
    err: DomainError,
    domain: string,
    extraHeaders: Record<string, string> | undefined,
  ): void {
    if (stream.headersSent || stream.destroyed) return;
    stream.respond(
      {
        ...extraHeaders,
        ":status": 200,
        "content-type": contentType,
        "x-request-id": requestId,
        "grpc-status": String(err.code),
        "grpc-message": encodeGrpcMessage(err.message),
        "grpc-status-details-bin": Buffer.from(toStatusBinary(err, domain))
          .toString("base64")
          .replace(/=+$/, ""),
        ...errorHeaders(err),
      },
      { endStream: true },
    );
  }

  /** Sends `frame`: the response message after 5 bytes of room for its gRPC prefix. */
  function succeed(
    res: Http2ServerResponse,
    contentType: string,
    frame: Buffer,
    extraHeaders: Record<string, string> | undefined,
  ): void {
    const stream = res.stream;
    if (stream.destroyed) return;
    frame[0] = 0; // not compressed
    frame.writeUInt32BE(frame.length - 5, 1);
    // The compatibility response owns the stream's trailers (it always asks for them).
    res.writeHead(200, {
      ...extraHeaders,
      "content-type": contentType,
      "grpc-accept-encoding": "identity",
    });
    res.addTrailers({ "grpc-status": "0" });
    res.end(frame);
  }

  /** `succeed` on the raw stream: headers, the message, then trailers once node asks for them. */
  function succeedOnStream(
    stream: ServerHttp2Stream,
    requestId: string,
    contentType: string,
    frame: Buffer,
    extraHeaders: Record<string, string> | undefined,
  ): void {
    if (stream.destroyed) return;
    frame[0] = 0; // not compressed
    frame.writeUInt32BE(frame.length - 5, 1);
    stream.respond(
      {
        ...extraHeaders,
        ":status": 200,
        "content-type": contentType,
        "grpc-accept-encoding": "identity",
        "x-request-id": requestId,
      },
      { waitForTrailers: true },
    );
    stream.once("wantTrailers", () => stream.sendTrailers({ "grpc-status": "0" }));
    stream.end(frame);
  }

  /**
   * Reads the request body from `source`, runs the call and answers through `ok` (the response
   * frame, 5 bytes of room first) or `failed`. A `grpc-timeout` (counted from now, when the
   * headers arrived) gives the call up when it passes and answers DEADLINE_EXCEEDED at once; the
   * handler, told through its context's signal, stops at its next store statement.
   */
  function serve(
    source: Readable,
    headers: IncomingHttpHeaders,
    record: CallRecord,
    ok: (frame: Buffer) => void,
    failed: (err: DomainError, domain: string) => void,
  ): void {
    const entry = byPath.get(record.path)!;
    record.rpc = entry.rpcName;
    let deadline: NodeJS.Timeout | undefined;
    let badTimeout: unknown;
    try {
      const timeoutMs = grpcTimeoutMs(headers["grpc-timeout"]);
      if (timeoutMs !== undefined) {
        deadline = setTimeout(() => {
          if (record.cancellation.abort(deadlineExceeded()))
            failed(pipeline.fail(record, null), entry.domain);
        }, timeoutMs);
      }
    } catch (err) {
      badTimeout = err;
    }
    const encoding = headers["grpc-encoding"];
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    source.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes + 5) tooLarge = true;
      else chunks.push(chunk);
    });
    source.on("error", () => {});
    source.on("end", () => {
      void (async () => {
        try {
          if (badTimeout !== undefined) throw badTimeout;
          if (tooLarge) throw bodyTooLarge(maxBodyBytes);
          const request = decodeRequest(entry, Buffer.concat(chunks, size), encoding);
          const response = await pipeline.invoke(record, entry, request, headers.authorization);
          ok(encoders.get(entry)!(create(entry.method.output, response as Message), 5));
        } catch (err) {
          failed(pipeline.fail(record, err), entry.domain);
        } finally {
          clearTimeout(deadline);
        }
      })();
    });
  }

  return {
    accepts(path, httpVersionMajor, contentType) {
      return (
        httpVersionMajor === 2 &&
        contentType !== undefined &&
        GRPC_CONTENT_TYPES.has(contentType) &&
        byPath.has(path)
      );
    },

    handle(req, res, record) {
      const contentType = req.headers["content-type"] ?? "application/grpc";
      const requestId = res.getHeader("x-request-id") as string;
      serve(
        req,
        req.headers,
        record,
        (frame) => succeed(res, contentType, frame, record.rateLimitHeaders),
        (err, domain) => fail(res.stream, requestId, contentType, err, domain, record.rateLimitHeaders),
      );
    },

    handleStream(stream, headers, record) {
      const contentType = headers["content-type"] ?? "application/grpc";
      serve(
        stream,
        headers,
        record,
        (frame) => succeedOnStream(stream, record.requestId, contentType, frame, record.rateLimitHeaders),
        (err, domain) => fail(stream, record.requestId, contentType, err, domain, record.rateLimitHeaders),
      );
    },
  };
}

/** The one message of a unary request body; malformed framing or bytes are INVALID_ARGUMENT. */
function decodeRequest(entry: MethodEntry, body: Buffer, encoding: string | string[] | undefined): Message {
  if (body.length < 5)
    throw new DomainError(Code.InvalidArgument, "Invalid argument: body: missing gRPC message frame");
  if (body[0] !== 0) {
    const name = typeof encoding === "string" ? encoding : "unknown";
    throw new DomainError(
      Code.Unimplemented,
      `Unimplemented: grpc-encoding "${name}" is not supported; send identity`,
    );
  }
  const length = body.readUInt32BE(1);
  if (length !== body.length - 5) {
    throw new DomainError(
      Code.InvalidArgument,
      "Invalid argument: body: a unary call carries exactly one message",
    );
  }
  try {
    return fromBinary(entry.method.input, body.subarray(5));
  } catch (err) {
    throw new DomainError(Code.InvalidArgument, `Invalid argument: body: ${(err as Error).message}`, {
      fieldViolations: [{ field: "body", description: (err as Error).message }],
    });
  }
}
