import {
  create,
  createRegistry,
  type DescMessage,
  type JsonObject,
  type Message,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import { anyPack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { DomainError, internal, isDomainError } from "../core/errors.js";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  PreconditionFailureSchema,
  ResourceInfoSchema,
} from "../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../gen/google/rpc/status_pb.js";

/** gRPC code names as they appear in ErrorInfo.reason and logs (`INVALID_ARGUMENT`). */
export const CODE_NAMES: Readonly<Record<number, string>> = {
  0: "OK",
  1: "CANCELLED",
  2: "UNKNOWN",
  3: "INVALID_ARGUMENT",
  4: "DEADLINE_EXCEEDED",
  5: "NOT_FOUND",
  6: "ALREADY_EXISTS",
  7: "PERMISSION_DENIED",
  8: "RESOURCE_EXHAUSTED",
  9: "FAILED_PRECONDITION",
  10: "ABORTED",
  11: "OUT_OF_RANGE",
  12: "UNIMPLEMENTED",
  13: "INTERNAL",
  14: "UNAVAILABLE",
  15: "DATA_LOSS",
  16: "UNAUTHENTICATED",
};

const HTTP_STATUS: Readonly<Record<number, number>> = {
  0: 200,
  1: 499,
  2: 500,
  3: 400,
  4: 504,
  5: 404,
  6: 409,
  7: 403,
  8: 429,
  9: 400,
  10: 409,
  11: 400,
  12: 501,
  13: 500,
  14: 503,
  15: 500,
  16: 401,
};

/** ErrorInfo.reason of {@link bodyTooLarge}: RESOURCE_EXHAUSTED answered with HTTP 413 instead of 429. */
export const BODY_TOO_LARGE_REASON = "BODY_TOO_LARGE";

/** ErrorInfo.reason of {@link methodNotAllowed}: UNIMPLEMENTED answered with HTTP 405 instead of 501. */
export const METHOD_NOT_ALLOWED_REASON = "METHOD_NOT_ALLOWED";

/** The domain used when no RPC is known (e.g. an unknown REST path outside every service area). */
export const DEFAULT_ERROR_DOMAIN = "wharf.dev";

/** The google.rpc detail types this module emits, for decoding Status JSON or `grpc-status-details-bin`. */
export const errorDetailsRegistry = createRegistry(
  ErrorInfoSchema,
  BadRequestSchema,
  ResourceInfoSchema,
  PreconditionFailureSchema,
);

/** HTTP status of a gRPC code, by the grpc-gateway table (unknown codes → 500). */
export function httpStatusForCode(code: Code): number {
  return HTTP_STATUS[code] ?? 500;
}

/**
 * HTTP status for a domain error: the gRPC table, except the two REST routing errors made here
 * ({@link bodyTooLarge} → 413, {@link methodNotAllowed} → 405).
 */
export function httpStatusFor(err: DomainError): number {
  if (err.code === Code.ResourceExhausted && err.details.reason === BODY_TOO_LARGE_REASON) return 413;
  if (err.code === Code.Unimplemented && err.details.reason === METHOD_NOT_ALLOWED_REASON) return 405;
  return httpStatusForCode(err.code);
}

/**
 * ErrorInfo.domain of a proto package: `platform.iam.v2` → `iam.wharf.dev`,
 * `platform.registry.v2` → `registry.wharf.dev`. The leading `platform` and trailing version
 * segments are dropped; an empty remainder gives `wharf.dev`.
 */
export function domainForPackage(protoPackage: string): string {
  const parts = protoPackage.split(".").filter((p) => p !== "");
  if (parts[0] === "platform") parts.shift();
  while (parts.length > 0 && /^v\d+((alpha|beta)\d*)?$/.test(parts[parts.length - 1]!)) parts.pop();
  return parts.length === 0 ? DEFAULT_ERROR_DOMAIN : `${parts.join(".")}.wharf.dev`;
}

/**
 * Normalises anything thrown into a DomainError. A DomainError passes through unchanged; anything
 * else becomes INTERNAL with a generic message (the caller logs the original, it is never sent).
 */
export function toDomainError(err: unknown): DomainError {
  return isDomainError(err) ? err : internal();
}

/** A RESOURCE_EXHAUSTED error for a request body above `limit` bytes (HTTP 413 over REST). */
export function bodyTooLarge(limit: number): DomainError {
  return new DomainError(Code.ResourceExhausted, `Request body too large: limit is ${limit} bytes`, {
    reason: BODY_TOO_LARGE_REASON,
    fieldViolations: [{ field: "body", description: `must be at most ${limit} bytes` }],
  });
}

/** NOT_FOUND for a REST path no route matches. */
export function routeNotFound(httpMethod: string, path: string): DomainError {
  return new DomainError(Code.NotFound, `Not found: no route for ${httpMethod} ${path}`);
}

/** UNIMPLEMENTED (HTTP 405) for a REST path that exists for other methods only. */
export function methodNotAllowed(httpMethod: string, path: string, allowed: readonly string[]): DomainError {
  return new DomainError(
    Code.Unimplemented,
    `Method not allowed: ${httpMethod} ${path} (allowed: ${allowed.join(", ")})`,
    { reason: METHOD_NOT_ALLOWED_REASON },
  );
}

/** One typed detail message, ready for `anyPack` or Connect's outgoing details. */
export type OutgoingDetail = { desc: DescMessage; value: Message };

/** The typed google.rpc details of `err`, ErrorInfo first and always present. */
export function detailsOf(err: DomainError, domain: string): OutgoingDetail[] {
  const d = err.details;
  const out: OutgoingDetail[] = [
    {
      desc: ErrorInfoSchema,
      value: create(ErrorInfoSchema, {
        reason: d.reason ?? CODE_NAMES[err.code] ?? "UNKNOWN",
        domain: d.domain ?? domain,
      }),
    },
  ];
  if (d.fieldViolations?.length) {
    out.push({
      desc: BadRequestSchema,
      value: create(BadRequestSchema, { fieldViolations: d.fieldViolations }),
    });
  }
  if (d.resource) {
    out.push({
      desc: ResourceInfoSchema,
      value: create(ResourceInfoSchema, {
        resourceType: d.resource.resourceType,
        resourceName: d.resource.resourceName,
      }),
    });
  }
  if (d.preconditionViolations?.length) {
    out.push({
      desc: PreconditionFailureSchema,
      value: create(PreconditionFailureSchema, {
        violations: d.preconditionViolations.map((v) => ({
          type: v.type,
          subject: v.subject ?? "",
          description: v.description,
        })),
      }),
    });
  }
  return out;
}

/**
 * The REST body of an error: canonical protojson of google.rpc.Status,
 * `{code, message, details: [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain}, …]}`
 * with ErrorInfo, then BadRequest, ResourceInfo and PreconditionFailure when the error carries them.
 * `domain` fills ErrorInfo.domain when the error does not name one.
 */
export function toStatusJson(err: DomainError, domain: string): JsonObject {
  const json = toJson(StatusSchema, statusOf(err, domain), { registry: errorDetailsRegistry }) as JsonObject;
  // protobuf-es writes "@type" last; conventional protojson (and grpc-gateway) puts it first.
  json.details = (json.details as JsonObject[]).map(({ "@type": type, ...rest }) => ({
    "@type": type ?? null,
    ...rest,
  }));
  return json;
}

/**
 * The binary google.rpc.Status of an error, as carried (base64) in gRPC's
 * `grpc-status-details-bin`: same code, message and typed details as {@link toStatusJson}.
 */
export function toStatusBinary(err: DomainError, domain: string): Uint8Array {
  return toBinary(StatusSchema, statusOf(err, domain));
}

function statusOf(err: DomainError, domain: string) {
  return create(StatusSchema, {
    code: err.code,
    message: err.message,
    details: detailsOf(err, domain).map((d) => anyPack(d.desc, d.value)),
  });
}

/** Response headers that go with an error: `WWW-Authenticate: Bearer` for UNAUTHENTICATED. */
export function errorHeaders(err: DomainError): Record<string, string> {
  return err.code === Code.Unauthenticated ? { "www-authenticate": "Bearer" } : {};
}

/**
 * The Connect/gRPC form of a domain error: same code, the wire message exactly `err.message`, and
 * the same typed details (carried in `grpc-status-details-bin` over gRPC, in the error JSON over
 * Connect). UNAUTHENTICATED adds `www-authenticate: Bearer` metadata.
 */
export function toConnectError(err: DomainError, domain: string): ConnectError {
  return new ConnectError(err.message, err.code, errorHeaders(err), detailsOf(err, domain));
}
