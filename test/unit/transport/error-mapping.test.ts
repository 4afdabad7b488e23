import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  DomainError,
  failedPrecondition,
  invalidArgument,
  notFound,
  permissionDenied,
  unauthenticated,
} from "../../../src/core/errors.js";
import {
  BadRequestSchema,
  ErrorInfoSchema,
  PreconditionFailureSchema,
  ResourceInfoSchema,
} from "../../../src/gen/google/rpc/error_details_pb.js";
import {
  bodyTooLarge,
  domainForPackage,
  errorHeaders,
  httpStatusFor,
  httpStatusForCode,
  methodNotAllowed,
  toConnectError,
  toDomainError,
  toStatusJson,
} from "../../../src/transport/error-mapping.js";

const TYPE = "type.googleapis.com/google.rpc.";

describe("error mapping", () => {
  it("maps every gRPC code to the grpc-gateway HTTP status", () => {
    const table: Array<[Code | 0, number]> = [
      [0, 200],
      [Code.InvalidArgument, 400],
      [Code.FailedPrecondition, 400],
      [Code.OutOfRange, 400],
      [Code.Unauthenticated, 401],
      [Code.PermissionDenied, 403],
      [Code.NotFound, 404],
      [Code.AlreadyExists, 409],
      [Code.Aborted, 409],
      [Code.ResourceExhausted, 429],
      [Code.Canceled, 499],
      [Code.Unknown, 500],
      [Code.Internal, 500],
      [Code.DataLoss, 500],
      [Code.Unimplemented, 501],
      [Code.Unavailable, 503],
      [Code.DeadlineExceeded, 504],
    ];
    for (const [code, status] of table) assert.equal(httpStatusForCode(code as Code), status, `code ${code}`);
    assert.equal(httpStatusFor(bodyTooLarge(10)), 413);
    assert.equal(httpStatusFor(methodNotAllowed("POST", "/x", ["GET"])), 405);
  });

  it("derives ErrorInfo.domain from the proto package", () => {
    assert.equal(domainForPackage("platform.iam.v2"), "iam.wharf.dev");
    assert.equal(domainForPackage("platform.registry.v2"), "registry.wharf.dev");
    assert.equal(domainForPackage("platform.registry"), "registry.wharf.dev");
    assert.equal(domainForPackage("platform.vulnerabilities.v1beta1"), "vulnerabilities.wharf.dev");
    assert.equal(domainForPackage("platform"), "wharf.dev");
  });

  it("writes the spec's validation error as google.rpc.Status JSON", () => {
    const err = invalidArgument("name", 'name must match "^[a-z0-9 ._-]{1,}$"');
    assert.deepEqual(toStatusJson(err, "iam.wharf.dev"), {
      code: 3,
      message: 'Invalid argument: name: name must match "^[a-z0-9 ._-]{1,}$"',
      details: [
        { "@type": `${TYPE}ErrorInfo`, reason: "INVALID_ARGUMENT", domain: "iam.wharf.dev" },
        {
          "@type": `${TYPE}BadRequest`,
          fieldViolations: [{ field: "name", description: 'name must match "^[a-z0-9 ._-]{1,}$"' }],
        },
      ],
    });
  });

  it("carries ResourceInfo for NOT_FOUND and PreconditionFailure for FAILED_PRECONDITION", () => {
    const missing = toStatusJson(notFound("repo", "abc"), "registry.wharf.dev");
    assert.deepEqual(missing.details, [
      { "@type": `${TYPE}ErrorInfo`, reason: "NOT_FOUND", domain: "registry.wharf.dev" },
      { "@type": `${TYPE}ResourceInfo`, resourceType: "repo", resourceName: "abc" },
    ]);
    const blocked = toStatusJson(
      failedPrecondition("RESOURCE_NOT_EMPTY", "group has repos"),
      "iam.wharf.dev",
    );
    assert.equal(blocked.code, 9);
    assert.deepEqual((blocked.details as unknown[])[1], {
      "@type": `${TYPE}PreconditionFailure`,
      violations: [{ type: "RESOURCE_NOT_EMPTY", description: "group has repos" }],
    });
  });

  it("fills reason from the code name and keeps an explicit domain", () => {
    const err = new DomainError(Code.Aborted, "Aborted: retry", { domain: "custom.wharf.dev" });
    assert.deepEqual((toStatusJson(err, "iam.wharf.dev").details as unknown[])[0], {
      "@type": `${TYPE}ErrorInfo`,
      reason: "ABORTED",
      domain: "custom.wharf.dev",
    });
  });

  it("turns anything that is not a DomainError into a generic INTERNAL", () => {
    const err = toDomainError(new Error("database password is hunter2"));
    assert.equal(err.code, Code.Internal);
    assert.doesNotMatch(err.message, /hunter2/);
    const same = permissionDenied("no");
    assert.equal(toDomainError(same), same);
  });

  it("asks for a bearer token on UNAUTHENTICATED only", () => {
    assert.deepEqual(errorHeaders(unauthenticated("x")), { "www-authenticate": "Bearer" });
    assert.deepEqual(errorHeaders(permissionDenied("x")), {});
  });

  it("builds a ConnectError with the exact message and typed details", () => {
    const err = invalidArgument("name", "is required");
    const connectError = toConnectError(err, "iam.wharf.dev");
    assert.ok(connectError instanceof ConnectError);
    assert.equal(connectError.code, Code.InvalidArgument);
    assert.equal(connectError.rawMessage, "Invalid argument: name: is required");
    const [info] = connectError.findDetails(ErrorInfoSchema);
    assert.deepEqual([info?.reason, info?.domain], ["INVALID_ARGUMENT", "iam.wharf.dev"]);
    assert.equal(connectError.findDetails(BadRequestSchema)[0]?.fieldViolations[0]?.field, "name");
    assert.equal(connectError.findDetails(ResourceInfoSchema).length, 0);

    const precondition = toConnectError(
      failedPrecondition("RESOURCE_NOT_EMPTY", "x", "group/1"),
      "iam.wharf.dev",
    );
    assert.equal(precondition.findDetails(PreconditionFailureSchema)[0]?.violations[0]?.subject, "group/1");
    const denied = toConnectError(unauthenticated("no token"), "iam.wharf.dev");
    assert.equal(denied.metadata.get("www-authenticate"), "Bearer");
  });
});
