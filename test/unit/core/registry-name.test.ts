import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { isDomainError } from "../../../src/core/errors.js";
import {
  MAX_GROUP_NAME_LENGTH,
  MAX_REPO_NAME_LENGTH,
  pathComponentProblem,
  REPOSITORY_PATH,
  validateGroupName,
  validateRepoName,
} from "../../../src/core/registry-name.js";

const GOOD = ["a", "ab", "9", "a.b", "a_b", "a__b", "a-b", "a---b", "a1.b2__c3-d4", "x".repeat(63)];
const BAD = [
  "",
  "A",
  "ab ",
  "my org",
  "..",
  ".a",
  "a.",
  "-a",
  "a-",
  "a--",
  "a__b_",
  "a___b",
  "a..b",
  "a/b",
  "é",
];

describe("registry names: one path-component rule for groups, repos and image paths", () => {
  it("accepts path components within the length range", () => {
    for (const name of GOOD) assert.equal(pathComponentProblem(name, MAX_GROUP_NAME_LENGTH), undefined, name);
    assert.equal(pathComponentProblem("r".repeat(128), MAX_REPO_NAME_LENGTH), undefined, "longest repo");
  });

  it("refuses anything else, and one character over the limit", () => {
    for (const name of BAD)
      assert.ok(pathComponentProblem(name, MAX_GROUP_NAME_LENGTH), JSON.stringify(name));
    assert.ok(pathComponentProblem("x".repeat(64), MAX_GROUP_NAME_LENGTH), "64-character group");
    assert.ok(pathComponentProblem("r".repeat(129), MAX_REPO_NAME_LENGTH), "129-character repo");
  });

  it("throws INVALID_ARGUMENT naming the field and stating the rule", () => {
    for (const [validate, max] of [
      [validateGroupName, 63],
      [validateRepoName, 128],
    ] as const) {
      assert.throws(
        () => validate("My Org"),
        (err: unknown) =>
          isDomainError(err) &&
          err.code === Code.InvalidArgument &&
          err.details.fieldViolations?.[0]?.field === "name" &&
          err.message.startsWith(`Invalid argument: name: name must be 1 to ${max} characters matching`),
      );
    }
    assert.throws(() => validateGroupName("..", "group.name"), /group\.name: group\.name must be/);
    validateGroupName("acme");
    validateRepoName("app");
  });

  it("joins components into repository paths", () => {
    assert.ok(REPOSITORY_PATH.test("acme/team/a---b/app"));
    for (const path of ["acme//app", "/acme", "acme/", "Acme/app", "acme/my app"]) {
      assert.equal(REPOSITORY_PATH.test(path), false, path);
    }
  });
});
