import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isExcludedTagName, type TagNameExclusions } from "../../../src/registry/v1/tag-name-kinds.js";

const NONE: TagNameExclusions = { excludeReferrers: false, excludeDates: false, excludeEpochs: false };
const hex = `${"0".repeat(63)}1`;

describe("the tag name kinds v1 tag lists can leave out", () => {
  it("leaves out nothing without a flag", () => {
    for (const name of [`sha256-${hex}`, "1.2-20240101", "1.2-r3", "latest"]) {
      assert.equal(isExcludedTagName(name, NONE), false, name);
    }
  });

  it("referrers: sha256-<64 hex> with or without a suffix, nothing else", () => {
    const flags = { ...NONE, excludeReferrers: true };
    assert.equal(isExcludedTagName(`sha256-${hex}`, flags), true);
    assert.equal(isExcludedTagName(`sha256-${hex}.sig`, flags), true);
    assert.equal(isExcludedTagName("sha256-abc", flags), false, "too short for a digest");
    assert.equal(isExcludedTagName("latest", flags), false);
  });

  it("dates: a -20yymmdd suffix; epochs: a -r<N> suffix", () => {
    const dates = { ...NONE, excludeDates: true };
    assert.equal(isExcludedTagName("1.2-20240101", dates), true);
    assert.equal(isExcludedTagName("20240101", dates), false, "a date alone is a version");
    assert.equal(isExcludedTagName("1.2-19990101", dates), false);
    const epochs = { ...NONE, excludeEpochs: true };
    assert.equal(isExcludedTagName("1.2-r3", epochs), true);
    assert.equal(isExcludedTagName("1.2-r", epochs), false);
    assert.equal(isExcludedTagName("1.2-rc1", epochs), false);
    assert.equal(isExcludedTagName("1.2-20240101", epochs), false);
  });
});
