import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { isDomainError } from "../../../src/core/errors.js";
import { grpcTimeoutMs } from "../../../src/transport/grpc-timeout.js";

describe("grpcTimeoutMs", () => {
  it("reads 1 to 8 digits in each unit as milliseconds", () => {
    assert.equal(grpcTimeoutMs("2H"), 7_200_000);
    assert.equal(grpcTimeoutMs("3M"), 180_000);
    assert.equal(grpcTimeoutMs("5S"), 5000);
    assert.equal(grpcTimeoutMs("300m"), 300);
    assert.equal(grpcTimeoutMs("2500u"), 2.5);
    assert.equal(grpcTimeoutMs("99999999n"), 99.999999);
    assert.equal(grpcTimeoutMs("0m"), 0);
  });

  it("no header is no deadline; one too long for a timer is as good as none", () => {
    assert.equal(grpcTimeoutMs(undefined), undefined);
    assert.equal(grpcTimeoutMs("99999999H"), undefined);
  });

  it("anything else is INVALID_ARGUMENT on grpc-timeout", () => {
    for (const bad of ["", "10", "m", "123456789m", "1.5S", "-1S", "10 s", "10s", "1D"]) {
      assert.throws(
        () => grpcTimeoutMs(bad),
        (err) => isDomainError(err) && err.code === Code.InvalidArgument && /grpc-timeout/.test(err.message),
        JSON.stringify(bad),
      );
    }
    assert.throws(
      () => grpcTimeoutMs(["1S", "2S"]),
      (err) => isDomainError(err),
      "a repeated header",
    );
  });
});
