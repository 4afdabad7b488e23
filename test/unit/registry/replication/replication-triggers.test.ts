import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ruleMatchesPush } from "../../../../src/registry/replication/replication-triggers.js";

describe("ruleMatchesPush", () => {
  const rule = (repoPattern: string, tagPattern: string) => ({ repoPattern, tagPattern });

  it("matches the repo path below the organization and the tag", () => {
    assert.equal(ruleMatchesPush(rule("team/**", "v*"), "acme", "acme/team/app", "v1"), true);
    assert.equal(ruleMatchesPush(rule("team/**", "v*"), "acme", "acme/team/sub/app", "v2.0"), true);
    assert.equal(
      ruleMatchesPush(rule("team/*", "v*"), "acme", "acme/team/sub/app", "v1"),
      false,
      "* stops at /",
    );
    assert.equal(ruleMatchesPush(rule("team/**", "v*"), "acme", "acme/team/app", "latest"), false);
    assert.equal(ruleMatchesPush(rule("team/**", "v*"), "acme", "acme/other/app", "v1"), false);
  });

  it("treats empty patterns as everything", () => {
    assert.equal(ruleMatchesPush(rule("", ""), "acme", "acme/a/b/c", "anything"), true);
    assert.equal(ruleMatchesPush(rule("**", ""), "acme", "acme/app", "x"), true);
  });

  it("never matches another organization's repo, even one whose name starts the same", () => {
    assert.equal(ruleMatchesPush(rule("**", ""), "acme", "acme2/app", "v1"), false);
    assert.equal(ruleMatchesPush(rule("**", ""), "acme", "globex/acme/app", "v1"), false);
  });
});
