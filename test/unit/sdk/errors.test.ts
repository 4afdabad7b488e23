import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { errorOfResponse, isWharfApiError, toWharfApiError, WharfApiError } from "../../../src/sdk/errors.js";
import { startTestServer, type TestServer } from "../../support/wharf-server.js";

describe("WharfApiError from the server's real answers", () => {
  let wharf: TestServer;
  let org: string;

  before(async () => {
    wharf = await startTestServer();
    org = await wharf.create("/iam/v2/groups", { name: "acme" });
  });
  after(() => wharf.close());

  it("decodes a REST google.rpc.Status: code, message, field violations, ErrorInfo", async () => {
    const res = await wharf.api(`/registry/v2/repos/${org}`, {
      method: "POST",
      token: wharf.adminToken,
      body: { name: "Bad Name" },
    });
    const err = await errorOfResponse(res);
    assert.equal(err.code, Code.InvalidArgument);
    assert.equal(err.httpStatus, 400);
    assert.match(err.message, /name must be 1 to 128 characters/);
    assert.deepEqual(
      err.fieldViolations.map((v) => v.field),
      ["name"],
    );
    assert.deepEqual(err.errorInfo && [err.errorInfo.reason, err.errorInfo.domain], [
      "INVALID_ARGUMENT",
      "registry.wharf.dev",
    ]);
    assert.deepEqual(err.preconditionViolations, []);
    assert.equal(err.resourceInfo, undefined);
  });

  it("decodes NOT_FOUND's ResourceInfo and FAILED_PRECONDITION's violations", async () => {
    const missing = `${org}/0123456789abcdef`;
    const notFound = await errorOfResponse(
      await wharf.api(`/registry/v2/repos/${missing}`, { token: wharf.adminToken }),
    );
    assert.equal(notFound.code, Code.NotFound);
    assert.equal(notFound.resourceInfo?.resourceName, missing);
    await wharf.create(`/registry/v2/repos/${org}`, { name: "app" });
    const notEmpty = await errorOfResponse(
      await wharf.api(`/iam/v2/groups/${org}`, { method: "DELETE", token: wharf.adminToken }),
    );
    assert.equal(notEmpty.code, Code.FailedPrecondition);
    assert.equal(notEmpty.codeName, "FAILED_PRECONDITION");
    assert.deepEqual(
      notEmpty.preconditionViolations.map((v) => [v.type, v.subject]),
      [["RESOURCE_NOT_EMPTY", org]],
    );
  });

  it("reads the registry's OCI errors: the code from the HTTP status, the OCI code as the reason", async () => {
    const res = await wharf.registry("/v2/acme/app/manifests/nope", { token: await wharf.registryToken() });
    const err = await errorOfResponse(res);
    assert.equal(err.code, Code.NotFound);
    assert.equal(err.errorInfo?.reason, "MANIFEST_UNKNOWN");
    assert.equal(err.httpStatus, 404);
  });

  it("reads the STS's errors (plain routes answer a Status too)", async () => {
    const res = await wharf.api("/sts/exchange", { token: "not-a-token" });
    const err = await errorOfResponse(res);
    assert.equal(err.code, Code.PermissionDenied);
    assert.match(err.message, /verifying token/);
  });
});

describe("WharfApiError without a Status", () => {
  it("takes the code from the HTTP status and keeps some of a text body", async () => {
    const err = await errorOfResponse(new Response("upstream down", { status: 503 }));
    assert.equal(err.code, Code.Unavailable);
    assert.equal(err.message, "HTTP 503: upstream down");
    const odd = await errorOfResponse(new Response("", { status: 418 }));
    assert.equal(odd.code, Code.Unknown);
    assert.equal(odd.message, "HTTP 418");
  });

  it("a malformed Status body still gives its message", async () => {
    const body = JSON.stringify({ code: 3, message: "bad", details: [{ "@type": 42 }] });
    const err = await errorOfResponse(new Response(body, { status: 400 }));
    assert.equal(err.code, Code.InvalidArgument);
    assert.equal(err.message, "bad");
  });

  it("passes a WharfApiError through, unwraps one that Connect wrapped, and names every code", () => {
    const original = new WharfApiError({ code: Code.PermissionDenied, message: "no" });
    assert.equal(toWharfApiError(original), original);
    assert.equal(toWharfApiError(ConnectError.from(original)), original, "a token source's error, wrapped");
    const plain = toWharfApiError(new ConnectError("gone", Code.NotFound));
    assert.deepEqual([plain.code, plain.message, plain.codeName], [Code.NotFound, "gone", "NOT_FOUND"]);
    assert.equal(new WharfApiError({ code: Code.Canceled, message: "" }).codeName, "CANCELLED");
    assert.equal(new WharfApiError({ code: Code.Unauthenticated, message: "" }).codeName, "UNAUTHENTICATED");
    assert.ok(isWharfApiError(plain));
    assert.ok(!isWharfApiError(new Error("x")));
    assert.equal(plain.name, "WharfApiError");
  });
});
