import type { OutgoingHttpHeaders } from "node:http";
import type { AnyResponse } from "./http-response.js";

/**
 * Percent-encodes a `grpc-message` value as the gRPC HTTP/2 spec defines it: only `%` and bytes
 * outside 0x20–0x7E are escaped (UTF-8 first), so `Invalid argument: name: …` stays readable.
 */
export function encodeGrpcMessage(message: string): string {
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * connect-es writes `grpc-message` with `encodeURIComponent`, escaping `:`, `,` and `$`, and
 * @grpc/grpc-js reads it with `decodeURI`, which leaves those escapes in place: a grpc-js client
 * would see `Invalid argument%3A name%3A …`. This rewrites the header (or trailer) of one gRPC
 * response into the spec's minimal form, which every decoder reads back exactly.
 */
export function normalizeGrpcMessage(res: AnyResponse): void {
  const target = res as unknown as {
    writeHead(status: number, headers?: OutgoingHttpHeaders): unknown;
    addTrailers(headers: OutgoingHttpHeaders): void;
  };
  const writeHead = target.writeHead;
  const addTrailers = target.addTrailers;
  target.writeHead = function (status, headers) {
    return writeHead.call(this, status, headers && reencode(headers));
  };
  target.addTrailers = function (headers) {
    addTrailers.call(this, reencode(headers));
  };
}

function reencode(headers: OutgoingHttpHeaders): OutgoingHttpHeaders {
  const value = headers["grpc-message"];
  if (typeof value !== "string") return headers;
  let message: string;
  try {
    message = decodeURIComponent(value);
  } catch {
    return headers;
  }
  return { ...headers, "grpc-message": encodeGrpcMessage(message) };
}
