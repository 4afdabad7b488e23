import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseDurationSeconds } from "../../../src/core/duration.js";

describe("parseDurationSeconds", () => {
  it("reads units and plain seconds", () => {
    assert.equal(parseDurationSeconds("90s"), 90);
    assert.equal(parseDurationSeconds("30m"), 1800);
    assert.equal(parseDurationSeconds("720h"), 720 * 3600);
    assert.equal(parseDurationSeconds("7d"), 7 * 86400);
    assert.equal(parseDurationSeconds("120"), 120);
  });
  it("rejects zero, negatives, fractions and junk", () => {
    for (const bad of ["0", "0h", "-1h", "1.5h", "1w", "", "h", "1 h x"]) {
      assert.equal(parseDurationSeconds(bad), undefined, bad);
    }
  });
});
