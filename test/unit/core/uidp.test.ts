import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  deterministicRootUid,
  isAncestorOrSelf,
  isUidp,
  newChildUid,
  newRootUid,
  parentOf,
  requireUidp,
  rootOf,
  selfAndAncestors,
} from "../../../src/core/uidp.js";

describe("uidp", () => {
  it("makes root and child uids of the documented shape", () => {
    const root = newRootUid();
    assert.match(root, /^[0-9a-f]{40}$/);
    const child = newChildUid(root);
    assert.match(child, /^[0-9a-f]{40}\/[0-9a-f]{16}$/);
    assert.notEqual(newRootUid(), root);
    assert.equal(deterministicRootUid("wharf:role:viewer"), deterministicRootUid("wharf:role:viewer"));
  });
  it("validates syntax", () => {
    const root = "a".repeat(40);
    assert.ok(isUidp(root) && isUidp(`${root}/${"b".repeat(16)}`));
    for (const bad of [
      "",
      "A".repeat(40),
      `${root}/`,
      `${root}/abc`,
      "a".repeat(39),
      `${root}/${"b".repeat(16)}/`,
    ]) {
      assert.equal(isUidp(bad), false, bad);
    }
    assert.throws(() => requireUidp("parent", ""), /parent: is required/);
  });
  it("walks the hierarchy", () => {
    const root = "a".repeat(40);
    const child = `${root}/${"b".repeat(16)}`;
    const grandchild = `${child}/${"c".repeat(16)}`;
    assert.equal(parentOf(grandchild), child);
    assert.equal(parentOf(root), "");
    assert.equal(rootOf(grandchild), root);
    assert.deepEqual(selfAndAncestors(grandchild), [root, child, grandchild]);
    assert.ok(isAncestorOrSelf(root, grandchild));
    assert.ok(isAncestorOrSelf(child, child));
    assert.equal(isAncestorOrSelf(grandchild, child), false);
    // A sibling whose uid merely starts with the same characters is not a descendant.
    assert.equal(isAncestorOrSelf(`${root}/${"b".repeat(15)}`, child), false);
  });
});
