import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { globSpecificity, tagGlobMatches, tagGlobProblem } from "../../../../src/registry/eol/tag-glob.js";
import { globToLike } from "../../../../src/storage/sql/eol-store.js";

describe("EOL tag globs", () => {
  it("accept tag-name characters with * and ?, refuse the rest", () => {
    for (const ok of ["*", "3.*", "?-slim", "v1_2-rc.*", "a".repeat(128)])
      assert.equal(tagGlobProblem(ok), undefined);
    for (const bad of ["", "3.[0-9]", "a b", "x/y", "%", "a".repeat(129)]) {
      assert.match(tagGlobProblem(bad) ?? "", /may hold only letters/);
    }
  });

  it("match whole names, case-sensitively, * for any run and ? for one character", () => {
    assert.ok(tagGlobMatches("*", ""));
    assert.ok(tagGlobMatches("3.*", "3.10.4-slim"));
    assert.ok(!tagGlobMatches("3.*", "30"));
    assert.ok(tagGlobMatches("?-slim", "8-slim"));
    assert.ok(!tagGlobMatches("?-slim", "18-slim"));
    assert.ok(!tagGlobMatches("latest", "Latest"));
    assert.ok(!tagGlobMatches("3.1", "3x1"), "a dot is literal");
  });

  it("LIKE patterns escape _ and the escape character, and map * and ?", () => {
    assert.equal(globToLike("v1_2*"), "v1\\_2%");
    assert.equal(globToLike("?.x"), "_.x");
  });

  it("prefer more literal characters, then fewer wildcards", () => {
    const order = ["3.10*", "3.*", "*"].map(globSpecificity);
    assert.ok(order[0] && order[1] && order[2]);
    assert.ok((order[0]?.[0] ?? 0) > (order[1]?.[0] ?? 0));
    assert.ok((order[1]?.[0] ?? 0) > (order[2]?.[0] ?? 0));
  });

  it("property: a glob built from a name by replacing characters with ? or a run with * still matches it", () => {
    const name = fc.stringMatching(/^[A-Za-z0-9_.-]{1,20}$/);
    fc.assert(
      fc.property(name, fc.nat(), fc.nat(), (tag, a, b) => {
        const i = a % tag.length;
        const j = i + (b % (tag.length - i + 1));
        const starred = `${tag.slice(0, i)}*${tag.slice(j)}`;
        const questioned = `${tag.slice(0, i)}?${tag.slice(i + 1)}`;
        return tagGlobMatches(starred, tag) && tagGlobMatches(questioned, tag) && tagGlobMatches(tag, tag);
      }),
    );
  });
});
