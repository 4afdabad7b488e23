import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { DomainError } from "../../../src/core/errors.js";
import { resolveUpdateMask, toSnake } from "../../../src/core/field-mask.js";

const spec = {
  known: ["uid", "name", "description", "claim_match", "create_time"],
  updatable: ["name", "description", "claim_match"],
};

describe("resolveUpdateMask", () => {
  it("maps camel and nested paths to top-level proto names, dropping output-only fields", () => {
    assert.deepEqual(
      resolveUpdateMask(spec, ["description", "claimMatch.issuer", "createTime"], () => []),
      ["description", "claim_match"],
    );
  });
  it("expands * to every updatable field", () => {
    assert.deepEqual(
      resolveUpdateMask(spec, ["*"], () => []),
      ["name", "description", "claim_match"],
    );
  });
  it("uses the populated fields when no mask is given", () => {
    assert.deepEqual(
      resolveUpdateMask(spec, [], () => ["name"]),
      ["name"],
    );
  });
  it("rejects unknown paths on update_mask", () => {
    assert.throws(
      () => resolveUpdateMask(spec, ["colour"], () => []),
      (e: unknown) => e instanceof DomainError && e.details.fieldViolations?.[0]?.field === "update_mask",
    );
  });
  it("converts camelCase to snake_case", () => {
    assert.equal(toSnake("createTime"), "create_time");
    assert.equal(toSnake("update_time"), "update_time");
  });
});
