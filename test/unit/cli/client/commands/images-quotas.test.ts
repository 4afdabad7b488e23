import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseByteSize, parseCount } from "../../../../../src/cli/client/commands/images-quotas.js";
import { UsageError } from "../../../../../src/cli/client/output.js";

describe("wharf images quota set: sizes and counts", () => {
  it("reads bytes, decimal and binary units, fractions, 0 and unlimited", () => {
    const cases: [string, bigint][] = [
      ["0", 0n],
      ["unlimited", 0n],
      ["UNLIMITED", 0n],
      ["1048576", 1_048_576n],
      ["512B", 512n],
      ["10GiB", 10n * 2n ** 30n],
      ["10 gib", 10n * 2n ** 30n],
      ["10Gi", 10n * 2n ** 30n],
      ["10GB", 10_000_000_000n],
      ["10G", 10_000_000_000n],
      ["1.5MiB", 1_572_864n],
      ["2TiB", 2n * 2n ** 40n],
      ["1k", 1_000n],
    ];
    for (const [text, bytes] of cases) assert.equal(parseByteSize(text), bytes, text);
  });

  it("refuses what is not a size or too large", () => {
    for (const text of ["", "-1", "ten", "10 XB", "1e3", "GiB", "99999999TiB"]) {
      assert.throws(() => parseByteSize(text), UsageError, text);
    }
  });

  it("reads whole counts and unlimited only", () => {
    assert.equal(parseCount("100"), 100n);
    assert.equal(parseCount("unlimited"), 0n);
    for (const text of ["1.5", "-3", "many", ""]) assert.throws(() => parseCount(text), UsageError, text);
  });
});
