import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { restrictionsOf } from "../../../src/authz/token-restrictions.js";
import { Capability } from "../../../src/gen/platform/capabilities/capabilities_pb.js";

const org = "a".repeat(40);
const team = `${org}/${"1".repeat(16)}`;
const other = "b".repeat(40);

describe("restrictionsOf", () => {
  it("is unrestricted without the claims", () => {
    assert.deepEqual(restrictionsOf({ sub: org }), {});
  });

  it("reads scope as a list or a space-separated string, kept minimal", () => {
    assert.deepEqual(restrictionsOf({ scope: [team, org, other] }).scopes, [org, other]);
    assert.deepEqual(restrictionsOf({ scope: `${team} ${other}` }).scopes, [team, other]);
  });

  it("reads cap as short or enum names", () => {
    const caps = restrictionsOf({ cap: ["repo.list", "CAP_TAG_LIST"] }).caps;
    assert.deepEqual([...(caps ?? [])].sort(), [Capability.CAP_REPO_LIST, Capability.CAP_TAG_LIST]);
  });

  it("fails closed on unreadable claims and ignores bad entries", () => {
    assert.deepEqual(restrictionsOf({ scope: 42 }).scopes, []);
    assert.deepEqual(restrictionsOf({ scope: [org, "not-a-uid"] }).scopes, [org]);
    assert.deepEqual(restrictionsOf({ scope: [] }).scopes, []);
    assert.equal(restrictionsOf({ cap: { [org]: "AAE" } }).caps?.size, 0);
    assert.deepEqual(
      [...(restrictionsOf({ cap: ["repo.list", "bogus"] }).caps ?? [])],
      [Capability.CAP_REPO_LIST],
    );
  });
});
