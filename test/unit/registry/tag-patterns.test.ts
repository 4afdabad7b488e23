import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { globMatcher, patternListMatcher, patternProblem } from "../../../src/registry/tag-patterns.js";

describe("governance patterns", () => {
  it("accept the glob dialect and refuse the rest, naming the pattern", () => {
    for (const ok of ["*", "v*", "v1.?", "v[0-9]*", "[!a-z]*", "release-*.*", "a".repeat(256)])
      assert.equal(patternProblem(ok, "tag", false), undefined, ok);
    for (const ok of ["team/*", "**", "apps/**/web", "svc-[ab]"])
      assert.equal(patternProblem(ok, "repo", false), undefined, ok);
    for (const bad of ["", "a b", "{a,b}", "x%", "a".repeat(257), "x/y"])
      assert.match(patternProblem(bad, "tag", false) ?? "", /may hold only letters/, bad);
    assert.match(patternProblem("v[0-9", "tag", false) ?? "", /unclosed or empty/);
    assert.match(patternProblem("v[]", "tag", false) ?? "", /unclosed or empty/);
    assert.match(patternProblem("v]", "tag", false) ?? "", /unclosed or empty/);
    assert.match(patternProblem("!latest", "tag", false) ?? "", /cannot be an exclusion/);
    assert.equal(patternProblem("!latest", "tag", true), undefined);
    assert.match(patternProblem("!!x", "tag", true) ?? "", /more than one leading "!"/);
  });

  it("match whole names: * stops at /, ** crosses it, ? is one character, […] a set", () => {
    assert.equal(globMatcher("v*")("v1.2"), true);
    assert.equal(globMatcher("v*")("xv1"), false);
    assert.equal(globMatcher("v?")("v12"), false);
    assert.equal(globMatcher("v[0-9]*")("v1.0"), true);
    assert.equal(globMatcher("v[0-9]*")("vx"), false);
    assert.equal(globMatcher("v[!0-9]*")("vx"), true);
    assert.equal(globMatcher("*")(".hidden"), true);
    assert.equal(globMatcher("team/*")("team/app"), true);
    assert.equal(globMatcher("team/*")("team/a/b"), false);
    assert.equal(globMatcher("team/**")("team/a/b"), true);
    assert.equal(globMatcher("V*")("v1"), false, "case-sensitive");
  });

  it("a pattern list includes by any inclusion and excludes by any exclusion", () => {
    const allButLatest = patternListMatcher(["*", "!latest"]);
    assert.equal(allButLatest("v1"), true);
    assert.equal(allButLatest("latest"), false);
    const onlyExclusions = patternListMatcher(["!dev-*"]);
    assert.equal(onlyExclusions("v1"), true);
    assert.equal(onlyExclusions("dev-3"), false);
    const releases = patternListMatcher(["v*", "release-*", "!*-rc*"]);
    assert.deepEqual(["v1", "release-2", "v2-rc1", "main"].filter(releases), ["v1", "release-2"]);
    assert.equal(patternListMatcher([])("anything"), false);
  });
});
