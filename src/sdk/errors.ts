import { createRegistry, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type BadRequest,
  BadRequestSchema,
  type ErrorInfo,
  ErrorInfoSchema,
  type PreconditionFailure,
  PreconditionFailureSchema,
  type ResourceInfo,
  ResourceInfoSchema,
} from "../gen/google/rpc/error_details_pb.js";
import { StatusSchema } from "../gen/google/rpc/status_pb.js";

/** One invalid field of a request (google.rpc.BadRequest.FieldViolation). */
export interface FieldViolation {
  /** Path of the field, e.g. `repo.name`. */
  field: string;
  description: string;
}

/** One unmet precondition (google.rpc.PreconditionFailure.Violation). */
export interface PreconditionViolation {
  /** Kind of precondition, e.g. `TERMS` or `NOT_EMPTY`. */
  type: string;
  /** What it is about, e.g. a uid. */
  subject: string;
  description: string;
}

/** The resource an error is about (google.rpc.ResourceInfo). */
export interface ErrorResource {
  resourceType: string;
  resourceName: string;
  owner: string;
  description: string;
}

/** Why an error happened, machine-readable (google.rpc.ErrorInfo). */
export interface ErrorReason {
  /** UPPER_SNAKE reason, e.g. `INVALID_ARGUMENT` or an OCI code such as `MANIFEST_UNKNOWN`. */
  reason: string;
  /** The error's domain, e.g. `registry.wharf.dev`. */
  domain: string;
  metadata: Record<string, string>;
}

const detailRegistry = createRegistry(
  ErrorInfoSchema,
  BadRequestSchema,
  PreconditionFailureSchema,
  ResourceInfoSchema,
);

/** gRPC code names (Connect's enum spells CANCELLED as `Canceled`). */
const CODE_NAMES: Readonly<Record<number, string>> = {
  [Code.Canceled]: "CANCELLED",
  [Code.Unknown]: "UNKNOWN",
  [Code.InvalidArgument]: "INVALID_ARGUMENT",
  [Code.DeadlineExceeded]: "DEADLINE_EXCEEDED",
  [Code.NotFound]: "NOT_FOUND",
  [Code.AlreadyExists]: "ALREADY_EXISTS",
  [Code.PermissionDenied]: "PERMISSION_DENIED",
  [Code.ResourceExhausted]: "RESOURCE_EXHAUSTED",
  [Code.FailedPrecondition]: "FAILED_PRECONDITION",
  [Code.Aborted]: "ABORTED",
  [Code.OutOfRange]: "OUT_OF_RANGE",
  [Code.Unimplemented]: "UNIMPLEMENTED",
  [Code.Internal]: "INTERNAL",
  [Code.Unavailable]: "UNAVAILABLE",
  [Code.DataLoss]: "DATA_LOSS",
  [Code.Unauthenticated]: "UNAUTHENTICATED",
};

/** gRPC code of an HTTP status, for answers that carry no code (the registry's OCI errors). */
const CODE_OF_HTTP_STATUS: Readonly<Record<number, Code>> = {
  400: Code.InvalidArgument,
  401: Code.Unauthenticated,
  403: Code.PermissionDenied,
  404: Code.NotFound,
  405: Code.Unimplemented,
  409: Code.AlreadyExists,
  413: Code.ResourceExhausted,
  416: Code.OutOfRange,
  429: Code.ResourceExhausted,
  499: Code.Canceled,
  501: Code.Unimplemented,
  503: Code.Unavailable,
  504: Code.DeadlineExceeded,
};

/**
 * The one error every failed SDK call rejects with: RPCs over any transport, the STS, the
 * registry's token, manifest and tag-history endpoints. `code` is the gRPC code, `message` the
 * server's message as sent (no `[code]` prefix), and the google.rpc.Status details are decoded
 * into plain fields; details the server did not send are empty (or undefined).
 */
export class WharfApiError extends Error {
  override readonly name = "WharfApiError";
  /** The gRPC status code (`Code.NotFound` = 5…). */
  readonly code: Code;
  /** Field violations of a BadRequest detail (INVALID_ARGUMENT). */
  readonly fieldViolations: readonly FieldViolation[];
  /** Violations of a PreconditionFailure detail (FAILED_PRECONDITION). */
  readonly preconditionViolations: readonly PreconditionViolation[];
  /** The ResourceInfo detail (NOT_FOUND, ALREADY_EXISTS…), if sent. */
  readonly resourceInfo: ErrorResource | undefined;
  /** The ErrorInfo detail (reason and domain), if sent. */
  readonly errorInfo: ErrorReason | undefined;
  /** The HTTP status of the answer, when the call was plain HTTP (STS, registry). */
  readonly httpStatus: number | undefined;

  /** Builds an error; most code gets one from {@link toWharfApiError} instead. */
  constructor(init: {
    code: Code;
    message: string;
    fieldViolations?: readonly FieldViolation[];
    preconditionViolations?: readonly PreconditionViolation[];
    resourceInfo?: ErrorResource | undefined;
    errorInfo?: ErrorReason | undefined;
    httpStatus?: number | undefined;
    cause?: unknown;
  }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.fieldViolations = init.fieldViolations ?? [];
    this.preconditionViolations = init.preconditionViolations ?? [];
    this.resourceInfo = init.resourceInfo;
    this.errorInfo = init.errorInfo;
    this.httpStatus = init.httpStatus;
  }

  /** The code's gRPC name, as the server writes it in ErrorInfo.reason: `NOT_FOUND`, `INVALID_ARGUMENT`… */
  get codeName(): string {
    return CODE_NAMES[this.code] ?? "UNKNOWN";
  }
}

/** True for a {@link WharfApiError} (also across copies of the SDK, where `instanceof` fails). */
export function isWharfApiError(err: unknown): err is WharfApiError {
  return err instanceof WharfApiError || (err instanceof Error && err.name === "WharfApiError");
}

interface DecodedDetails {
  badRequest?: BadRequest;
  precondition?: PreconditionFailure;
  resource?: ResourceInfo;
  info?: ErrorInfo;
}

function fromDetails(
  code: Code,
  message: string,
  details: DecodedDetails,
  extra: { httpStatus?: number; cause?: unknown },
): WharfApiError {
  const { badRequest, precondition, resource, info } = details;
  return new WharfApiError({
    code,
    message,
    fieldViolations: (badRequest?.fieldViolations ?? []).map((v) => ({
      field: v.field,
      description: v.description,
    })),
    preconditionViolations: (precondition?.violations ?? []).map((v) => ({
      type: v.type,
      subject: v.subject,
      description: v.description,
    })),
    resourceInfo: resource && {
      resourceType: resource.resourceType,
      resourceName: resource.resourceName,
      owner: resource.owner,
      description: resource.description,
    },
    errorInfo: info && { reason: info.reason, domain: info.domain, metadata: { ...info.metadata } },
    ...extra,
  });
}

/**
 * Converts what a Connect call threw into a {@link WharfApiError} (a WharfApiError passes through;
 * anything else becomes UNKNOWN, or UNAVAILABLE for a failed fetch), decoding the status details.
 */
export function toWharfApiError(err: unknown): WharfApiError {
  if (isWharfApiError(err)) return err;
  const connect = ConnectError.from(err);
  // What a token source threw comes back wrapped in an UNKNOWN ConnectError.
  if (isWharfApiError(connect.cause)) return connect.cause;
  return fromDetails(
    isNetworkFailure(connect) ? Code.Unavailable : connect.code,
    connect.rawMessage,
    {
      badRequest: connect.findDetails(BadRequestSchema)[0],
      precondition: connect.findDetails(PreconditionFailureSchema)[0],
      resource: connect.findDetails(ResourceInfoSchema)[0],
      info: connect.findDetails(ErrorInfoSchema)[0],
    },
    { cause: err },
  );
}

/**
 * The error of a plain-HTTP answer that failed: a google.rpc.Status JSON body (the API port's
 * plain routes: `/sts/*`, `/auth/*`), an OCI error body (`{"errors":[{code,message}]}`, the
 * registry), or anything else (the HTTP status gives the code).
 */
export async function errorOfResponse(response: Response): Promise<WharfApiError> {
  const text = await response.text().catch(() => "");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const httpStatus = response.status;
  const fallbackCode = CODE_OF_HTTP_STATUS[httpStatus] ?? Code.Unknown;
  if (isObject(body) && typeof body.code === "number" && typeof body.message === "string") {
    try {
      const status = fromJson(StatusSchema, body as JsonValue, {
        registry: detailRegistry,
        ignoreUnknownFields: true,
      });
      const decoded: DecodedDetails = {};
      for (const any of status.details) {
        const detail = anyUnpack(any, detailRegistry);
        if (!detail) continue;
        if (detail.$typeName === "google.rpc.BadRequest") decoded.badRequest = detail as BadRequest;
        if (detail.$typeName === "google.rpc.PreconditionFailure")
          decoded.precondition = detail as PreconditionFailure;
        if (detail.$typeName === "google.rpc.ResourceInfo") decoded.resource = detail as ResourceInfo;
        if (detail.$typeName === "google.rpc.ErrorInfo") decoded.info = detail as ErrorInfo;
      }
      return fromDetails(status.code as Code, status.message, decoded, { httpStatus });
    } catch {
      // Not a well-formed Status after all: fall through to the plain reading.
    }
  }
  const oci =
    isObject(body) && Array.isArray(body.errors) && isObject(body.errors[0]) ? body.errors[0] : undefined;
  if (oci && typeof oci.code === "string") {
    return new WharfApiError({
      code: fallbackCode,
      message: typeof oci.message === "string" ? oci.message : oci.code,
      errorInfo: { reason: oci.code, domain: "registry", metadata: {} },
      httpStatus,
    });
  }
  const message =
    isObject(body) && typeof body.message === "string"
      ? body.message
      : `HTTP ${httpStatus}${text ? `: ${text.slice(0, 200)}` : ""}`;
  return new WharfApiError({ code: fallbackCode, message, httpStatus });
}

/** A fetch that got no answer: undici's "fetch failed", browsers' "Failed to fetch" / NetworkError. */
function isNetworkFailure(err: ConnectError): boolean {
  const cause = err.cause;
  return (
    err.code === Code.Unknown &&
    cause instanceof TypeError &&
    /fetch failed|failed to fetch|networkerror|load failed/i.test(cause.message)
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
