import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { digestPrefixOf } from "../../../../src/registry/search/search-service.js";

describe("digestPrefixOf", () => {
  it("reads 4 to 64 hex digits, with or without sha256:, in any case, as a lower-case sha256 prefix", () => {
    assert.equal(digestPrefixOf("abcd"), "sha256:abcd");
    assert.equal(digestPrefixOf("sha256:ABCD12"), "sha256:abcd12");
    assert.equal(digestPrefixOf("SHA256:0f0f"), "sha256:0f0f");
    assert.equal(digestPrefixOf(`sha256:${"a".repeat(64)}`), `sha256:${"a".repeat(64)}`);
  });

  it("is undefined for anything else: too short, too long, not hex, another algorithm", () => {
    for (const query of [
      "abc",
      "sha256:abc",
      "a".repeat(65),
      "abcg",
      "sha512:abcd",
      "sha256:",
      "web-app",
      "ab%d",
    ]) {
      assert.equal(digestPrefixOf(query), undefined, query);
    }
  });
});
