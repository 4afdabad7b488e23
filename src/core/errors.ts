import { Code } from "@connectrpc/connect";

/** One field problem in a request, reported as a google.rpc.BadRequest field violation. */
export interface FieldViolation {
  field: string;
  description: string;
}

/** One failed precondition, reported as a google.rpc.PreconditionFailure violation. */
export interface PreconditionViolation {
  type: string;
  subject?: string;
  description: string;
}

/** Typed error details carried by a DomainError; the transport encodes them once, per protocol. */
export interface ErrorDetails {
  /** ErrorInfo.reason; defaults to the gRPC code name (e.g. `INVALID_ARGUMENT`). */
  reason?: string;
  /** ErrorInfo.domain; when unset the transport fills `<domain>.wharf.dev` from the RPC's package. */
  domain?: string;
  fieldViolations?: FieldViolation[];
  preconditionViolations?: PreconditionViolation[];
  resource?: { resourceType: string; resourceName: string };
}

/**
 * The single error type of the domain layer. It carries a gRPC code (numerically identical to
 * Connect's `Code`), a human message and typed details. `src/transport/error-mapping.ts` is the only
 * place that turns it into REST JSON, gRPC status details or OCI envelopes.
 */
export class DomainError extends Error {
  constructor(
    readonly code: Code,
    message: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message);
    this.name = "DomainError";
  }
}

/** Any value thrown that is a DomainError. */
export function isDomainError(err: unknown): err is DomainError {
  return err instanceof DomainError;
}

/** INVALID_ARGUMENT for one or more fields: message `Invalid argument: <field>: <description>`. */
export function invalidArgument(
  field: string,
  description: string,
  more: FieldViolation[] = [],
): DomainError {
  return new DomainError(Code.InvalidArgument, `Invalid argument: ${field}: ${description}`, {
    reason: "INVALID_ARGUMENT",
    fieldViolations: [{ field, description }, ...more],
  });
}

/** FAILED_PRECONDITION with one PreconditionFailure violation: message `Precondition failed: <description>`. */
export function failedPrecondition(type: string, description: string, subject?: string): DomainError {
  return failedPreconditions(description, [{ type, description, ...(subject ? { subject } : {}) }]);
}

/**
 * FAILED_PRECONDITION with several PreconditionFailure violations (e.g. one per resource blocking a
 * delete): message `Precondition failed: <description>`.
 */
export function failedPreconditions(description: string, violations: PreconditionViolation[]): DomainError {
  return new DomainError(Code.FailedPrecondition, `Precondition failed: ${description}`, {
    reason: "FAILED_PRECONDITION",
    preconditionViolations: violations,
  });
}

/** NOT_FOUND with a ResourceInfo detail naming the missing resource. */
export function notFound(resourceType: string, resourceName: string): DomainError {
  return new DomainError(Code.NotFound, `Not found: ${resourceType} ${resourceName}`, {
    reason: "NOT_FOUND",
    resource: { resourceType, resourceName },
  });
}

/** Awaits a write that resolves false when its row did not exist, and throws `notFound` then. */
export async function requireFound(
  write: Promise<boolean>,
  resourceType: string,
  resourceName: string,
): Promise<void> {
  if (!(await write)) throw notFound(resourceType, resourceName);
}

/** ALREADY_EXISTS, e.g. a second repo with the same name under one group. */
export function alreadyExists(resourceType: string, resourceName: string, description: string): DomainError {
  return new DomainError(Code.AlreadyExists, `Already exists: ${description}`, {
    reason: "ALREADY_EXISTS",
    resource: { resourceType, resourceName },
  });
}

/** UNAUTHENTICATED: no credentials, or credentials that do not verify. */
export function unauthenticated(description: string, reason = "UNAUTHENTICATED"): DomainError {
  return new DomainError(Code.Unauthenticated, `Unauthenticated: ${description}`, { reason });
}

/**
 * PERMISSION_DENIED: authenticated, but lacking a capability at the scope (or, with a `reason`,
 * another right, e.g. `RESERVED_NAME` for a name only the platform administrator may use).
 */
export function permissionDenied(description: string, reason = "PERMISSION_DENIED"): DomainError {
  return new DomainError(Code.PermissionDenied, `Permission denied: ${description}`, { reason });
}

/** INTERNAL: a bug or an unexpected failure; the message never carries internals to the caller. */
export function internal(description = "internal error"): DomainError {
  return new DomainError(Code.Internal, `Internal: ${description}`, { reason: "INTERNAL" });
}

/** UNAVAILABLE: a dependency (e.g. an upstream identity provider) could not be reached; retry later. */
export function unavailable(description: string): DomainError {
  return new DomainError(Code.Unavailable, `Unavailable: ${description}`, { reason: "UNAVAILABLE" });
}
