import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isDomainError } from "../../../../src/core/errors.js";
import {
  DEFAULT_TAG_TTL_MS,
  formatTtl,
  parseTagTtl,
  upstreamMessage,
  validateCredentials,
} from "../../../../src/registry/upstreams/upstream-mapping.js";

function fieldOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    assert.ok(isDomainError(err));
    return err.details.fieldViolations?.[0]?.field;
  }
  return undefined;
}

describe("upstream mapping", () => {
  it("parses tag TTLs within 1s..7d, the default for empty, and writes them back in the largest exact unit", () => {
    assert.equal(parseTagTtl(""), DEFAULT_TAG_TTL_MS);
    assert.equal(parseTagTtl("1s"), 1000);
    assert.equal(parseTagTtl("90"), 90_000);
    assert.equal(parseTagTtl("7d"), 7 * 86_400_000);
    for (const bad of ["0s", "8d", "169h", "-1m", "1.5h", "1w", "soon"]) {
      assert.equal(
        fieldOf(() => parseTagTtl(bad)),
        "tag_ttl",
        bad,
      );
    }
    assert.deepEqual(
      [1000, 90_000, 600_000, 3_600_000, 5_400_000, 86_400_000, 7 * 86_400_000].map(formatTtl),
      ["1s", "90s", "10m", "1h", "90m", "1d", "7d"],
    );
    for (const text of ["45s", "10m", "36h", "3d"]) assert.equal(formatTtl(parseTagTtl(text)), text);
  });

  it("answers hasPassword, never the password", () => {
    const row = {
      uid: "o/1",
      orgUid: "o",
      name: "hub",
      url: "https://r.example",
      username: "u",
      passwordSealed: "v1:xx:yy",
      tagTtlMs: 600_000,
      createTime: 0,
      updateTime: 1,
    };
    const message = upstreamMessage(row);
    assert.equal(message.password, "");
    assert.equal(message.hasPassword, true);
    assert.equal(message.tagTtl, "10m");
    assert.equal(upstreamMessage({ ...row, passwordSealed: "" }).hasPassword, false);
  });

  it("checks credentials without repeating the password", () => {
    validateCredentials("", "");
    validateCredentials("robot$ci", "p@ss word");
    assert.equal(
      fieldOf(() => validateCredentials("a b", "")),
      "username",
    );
    assert.equal(
      fieldOf(() => validateCredentials("a:b", "")),
      "username",
    );
    assert.equal(
      fieldOf(() => validateCredentials("x".repeat(257), "")),
      "username",
    );
    assert.equal(
      fieldOf(() => validateCredentials("u", "line\nbreak")),
      "password",
    );
    assert.equal(
      fieldOf(() => validateCredentials("", "secret")),
      "password",
    );
    try {
      validateCredentials("", "TOP-SECRET-VALUE");
    } catch (err) {
      assert.ok(
        !JSON.stringify(err).includes("TOP-SECRET-VALUE") && !String(err).includes("TOP-SECRET-VALUE"),
      );
    }
  });
});
