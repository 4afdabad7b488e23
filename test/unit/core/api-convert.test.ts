import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { fromTimestamp, toTimestamp } from "../../../src/core/api-convert.js";

describe("toTimestamp", () => {
  it("equals protobuf-es timestampFromMs, before and after the epoch", () => {
    for (const ms of [
      0, 1, 999, 1000, 1001, -1, -999, -1000, -1001, 1_763_779_540_123, -62_135_596_800_000,
    ]) {
      assert.deepEqual(toTimestamp(ms), timestampFromMs(ms), `${ms} ms`);
      assert.equal(fromTimestamp(toTimestamp(ms)), ms);
    }
    assert.equal(toTimestamp(undefined), undefined);
  });
});
