import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  emitBound,
  mergeListing,
  parsePartKey,
  partKey,
  type RawObject,
} from "../../../../src/storage/blobs/s3/s3-layout.js";

// The S3 driver's pure layout logic: chunk naming and the ordered merge of raw listings (also
// covered end to end by the conformance suite against s3rver; these cases add page boundaries
// and orders s3rver does not produce).

async function* pagesOf(...pages: RawObject[][]): AsyncGenerator<RawObject[]> {
  yield* pages;
}

const raw = (key: string, size = 1, modifiedTime = 1000): RawObject => ({ key, size, modifiedTime });

async function merged(prefix: string, ...pages: RawObject[][]): Promise<[string, number, number][]> {
  const out: [string, number, number][] = [];
  for await (const e of mergeListing(pagesOf(...pages), prefix)) out.push([e.key, e.size, e.modifiedTime]);
  return out;
}

describe("S3 layout", () => {
  it("names chunks with fixed-width numbers and parses them back", () => {
    assert.equal(partKey("uploads/u/data", 1), "uploads/u/data.parts/00000001");
    assert.equal(partKey("p/k", 12_345_678), "p/k.parts/12345678");
    assert.deepEqual(parsePartKey("uploads/u/data.parts/00000042"), { key: "uploads/u/data", number: 42 });
    assert.equal(parsePartKey("uploads/u/data.parts/42"), undefined);
    assert.equal(parsePartKey("uploads/u/data"), undefined);
    assert.equal(parsePartKey("x.parts/00000001/y"), undefined);
  });

  it("sums chunks into their logical key and emits it in logical order", async () => {
    assert.deepEqual(
      await merged(
        "p/",
        [raw("p/a-b", 1), raw("p/a.parts/00000001", 3, 1000), raw("p/a.parts/00000002", 4, 3000)],
        [raw("p/a/c", 2), raw("p/a0", 5)],
      ),
      [
        ["p/a", 7, 3000],
        ["p/a-b", 1, 1000],
        ["p/a/c", 2, 1000],
        ["p/a0", 5, 1000],
      ],
    );
  });

  it("keeps ordering when a logical key's chunks arrive pages after greater raw keys", async () => {
    const pages = [
      [raw("k-1"), raw("k-2")],
      [raw("k-3"), raw("k.b")],
      [raw("k.parts/00000001", 10)],
      [raw("k.parts/00000002", 20), raw("k/x"), raw("l")],
    ];
    assert.deepEqual(
      (await merged("", ...pages)).map(([k, s]) => [k, s]),
      [
        ["k", 30],
        ["k-1", 1],
        ["k-2", 1],
        ["k-3", 1],
        ["k.b", 1],
        ["k/x", 1],
        ["l", 1],
      ],
    );
  });

  it("lets a plain object win over chunks of the same key", async () => {
    assert.deepEqual(await merged("", [raw("k", 5, 9000), raw("k.parts/00000001", 100, 1)]), [
      ["k", 5, 9000],
    ]);
  });

  it("drops keys outside the prefix and foreign objects", async () => {
    assert.deepEqual(
      (await merged("p/a.", [raw("p/a.b"), raw("p/a.parts/00000001")])).map(([k]) => k),
      ["p/a.b"],
    );
    assert.deepEqual(
      (await merged("", [raw("dir/"), raw("has space"), raw("ok"), raw("_tmp/x")])).map(([k]) => k),
      ["ok"],
    );
  });

  it("sorts a page the server returned out of order", async () => {
    assert.deepEqual(
      (await merged("", [raw("b/x"), raw("a"), raw("b-c"), raw("a.parts/00000001")])).map(([k]) => k),
      ["a", "b-c", "b/x"],
    );
  });

  it("emitBound stops at the first place a chunked logical key could still sort before", () => {
    assert.equal(emitBound("blobs/sha256/ab/abcdef/data", 0), "blobs/sha256/ab/abcdef/data");
    assert.equal(emitBound("uploads/1234-5678/data", 0), "uploads/1234");
    assert.equal(emitBound("k.parts/00000001", 0), "k");
    assert.equal(emitBound("k.b", 0), "k");
    assert.equal(emitBound("k.z", 0), "k.z", "k.parts/… sorts before k.z: nothing later can be k");
    assert.equal(emitBound("p/k-1", 4), "p/k-1", "prefixes shorter than the listing prefix do not count");
  });
});
