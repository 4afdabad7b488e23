import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { dryRunBlobs } from "../../../src/registry/data-plane/dry-run-blobs.js";
import { createMemoryBlobDriver } from "../../../src/storage/blobs/memory/memory-blob-driver.js";
import { tracedBlobDriver } from "../../../src/storage/blobs/traced-blob-driver.js";
import { bytes, streamOf } from "../../conformance/blobs/blob-test-data.js";
import { sizeCheckCases } from "../../conformance/blobs/size-check.cases.js";

// The wrappers around a driver (tracing, a gc dry run) keep the read-path size check: they pass
// the expected size on, so a blob of the wrong size is refused through them too.
for (const [name, wrap] of [
  ["tracedBlobDriver", tracedBlobDriver],
  ["dryRunBlobs", dryRunBlobs],
] as const) {
  describe(`${name} over the memory driver`, () => {
    const driver = wrap(createMemoryBlobDriver());
    let counter = 0;
    sizeCheckCases({
      kind: driver.kind,
      driver,
      ns: () => `w${++counter}/`,
      rawKeys: async () => [],
    });
  });
}

describe("dryRunBlobs", () => {
  it("deletes nothing, and afterwards stats and lists the object as gone", async () => {
    const inner = createMemoryBlobDriver();
    await inner.put("blobs/a", streamOf(bytes(10)));
    await inner.put("blobs/b", streamOf(bytes(10)));
    const dry = dryRunBlobs(inner);
    await dry.delete("blobs/a");
    assert.ok(await inner.stat("blobs/a"), "the object is still stored");
    assert.equal(await dry.stat("blobs/a"), undefined);
    const listed: string[] = [];
    for await (const entry of dry.list("blobs/")) listed.push(entry.key);
    assert.deepEqual(listed, ["blobs/b"]);
  });
});
