import { type DescMessage, fromBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { DomainError } from "../core/errors.js";

/**
 * How a Connect-served unary request carries its message in protobuf binary: the bare message
 * (Connect, `application/proto`) or one gRPC-Web envelope (`application/grpc-web[+proto]`).
 * Undefined for anything else (JSON, base64 gRPC-Web text, gRPC, compressed bodies): those are
 * left to Connect unchecked.
 */
export type BinaryFraming = "connect" | "grpc-web";

/** The framing of a request by its headers, when {@link checkBinaryBody} should check it. */
export function binaryFramingOf(
  contentType: string | undefined,
  contentEncoding: string | undefined,
): BinaryFraming | undefined {
  const type = contentType?.toLowerCase();
  if (type === "application/proto") {
    return contentEncoding === undefined || contentEncoding === "identity" ? "connect" : undefined;
  }
  if (type === "application/grpc-web" || type === "application/grpc-web+proto") return "grpc-web";
  return undefined;
}

/**
 * Connect (the library) answers a request message it cannot decode from protobuf binary with
 * INTERNAL: its serialization wraps every parse failure so, while malformed JSON is
 * INVALID_ARGUMENT. This reads the body (at most `maxBytes` plus an envelope; a larger one passes
 * on untouched for Connect to refuse), decodes it as `input` and, when that fails, hands Connect
 * an EMPTY message instead, which always decodes, after telling `onInvalid` the INVALID_ARGUMENT
 * to answer: the RPC wrapper then throws it before authentication, as the direct gRPC path and
 * REST do, and Connect writes it in the request's own protocol. A gRPC-Web envelope that is
 * compressed is passed on unchecked. The message is decoded twice when valid: request messages
 * are small, and this path is not the fast one (ADR 0006).
 */
export async function* checkBinaryBody(
  body: AsyncIterable<Uint8Array>,
  framing: BinaryFraming,
  input: DescMessage,
  maxBytes: number,
  onInvalid: (err: DomainError) => void,
): AsyncGenerator<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body[Symbol.asyncIterator]();
  for (let next = await reader.next(); !next.done; next = await reader.next()) {
    chunks.push(next.value);
    size += next.value.byteLength;
    if (size > maxBytes + 5) {
      yield* chunks;
      for (let rest = await reader.next(); !rest.done; rest = await reader.next()) yield rest.value;
      return;
    }
  }
  const bytes = Buffer.concat(chunks, size);
  const message = framing === "connect" ? bytes : singleEnvelope(bytes);
  if (message === undefined) {
    yield bytes;
    return;
  }
  try {
    fromBinary(input, message);
    yield bytes;
  } catch (err) {
    const description = (err as Error).message;
    onInvalid(
      new DomainError(Code.InvalidArgument, `Invalid argument: body: ${description}`, {
        fieldViolations: [{ field: "body", description }],
      }),
    );
    yield framing === "connect" ? new Uint8Array(0) : new Uint8Array(5);
  }
}

/** The payload of `bytes` when it is exactly one uncompressed envelope; else undefined (Connect judges). */
function singleEnvelope(bytes: Buffer): Buffer | undefined {
  if (bytes.length < 5 || bytes[0] !== 0 || bytes.readUInt32BE(1) !== bytes.length - 5) return undefined;
  return bytes.subarray(5);
}
