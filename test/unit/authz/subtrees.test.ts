import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { coveredBy, intersectRoots, minimalRoots } from "../../../src/authz/subtrees.js";

const org = "a".repeat(40);
const other = "b".repeat(40);
const team = `${org}/${"1".repeat(16)}`;
const sibling = `${org}/${"2".repeat(16)}`;
const deep = `${team}/${"3".repeat(16)}`;

describe("subtrees", () => {
  it("minimalRoots drops duplicates and covered descendants, sorted", () => {
    assert.deepEqual(minimalRoots([deep, other, team, org, team]), [org, other]);
    assert.deepEqual(minimalRoots([deep, sibling]), [sibling, deep].sort());
    assert.deepEqual(minimalRoots([]), []);
  });

  it("does not treat a uid prefix as an ancestor", () => {
    const longer = `${org.slice(0, 39)}f`;
    assert.deepEqual(minimalRoots([org.slice(0, 39), longer]).length, 2);
    assert.equal(coveredBy([org], `${org}x`), false);
  });

  it("intersectRoots keeps the deeper root of each overlapping pair", () => {
    assert.deepEqual(intersectRoots([org], [team, other]), [team]);
    assert.deepEqual(intersectRoots([team, other], [org]), [team]);
    assert.deepEqual(intersectRoots([team], [sibling]), []);
    assert.deepEqual(intersectRoots([org, other], [other, deep]), [deep, other].sort());
  });

  it("coveredBy is ancestor-or-self", () => {
    assert.equal(coveredBy([team], deep), true);
    assert.equal(coveredBy([team], team), true);
    assert.equal(coveredBy([team], org), false);
    assert.equal(coveredBy([team], sibling), false);
    assert.equal(coveredBy([], org), false);
  });
});
