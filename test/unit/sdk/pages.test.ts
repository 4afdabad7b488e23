import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { WharfApiError } from "../../../src/sdk/errors.js";
import { listAll, pages } from "../../../src/sdk/pages.js";

interface Request {
  pageSize?: number;
  pageToken?: string;
  name?: string;
}
interface Response {
  $typeName: "test.ListThingsResponse";
  things: string[];
  nextPageToken: string;
  $unknown?: unknown[];
}

/** A List method over `items`: the page token is the offset, as a string. */
function lister(items: string[], calls: Request[] = []) {
  return async (request: Request): Promise<Response> => {
    calls.push(request);
    const offset = Number(request.pageToken || "0");
    const size = request.pageSize || 3;
    const next = offset + size < items.length ? String(offset + size) : "";
    return {
      $typeName: "test.ListThingsResponse",
      things: items.slice(offset, offset + size),
      nextPageToken: next,
    };
  };
}

async function collect<T>(iterable: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of iterable) out.push(item);
  return out;
}

describe("pages and listAll", () => {
  const items = ["a", "b", "c", "d", "e"];

  it("pages follows nextPageToken to the end, keeping the request's other fields", async () => {
    const calls: Request[] = [];
    const got = await collect(pages(lister(items, calls), { pageSize: 2, name: "x" }));
    assert.deepEqual(
      got.map((p) => p.things),
      [["a", "b"], ["c", "d"], ["e"]],
    );
    assert.deepEqual(calls, [
      { pageSize: 2, name: "x", pageToken: "" },
      { pageSize: 2, name: "x", pageToken: "2" },
      { pageSize: 2, name: "x", pageToken: "4" },
    ]);
  });

  it("starts from a given page token; one empty page is one page", async () => {
    assert.deepEqual(
      (await collect(pages(lister(items), { pageSize: 2, pageToken: "2" }))).map((p) => p.things),
      [["c", "d"], ["e"]],
    );
    assert.deepEqual((await collect(pages(lister([]), {}))).length, 1);
  });

  it("listAll yields the list field's items, never `$unknown`", async () => {
    const method = async (request: Request): Promise<Response> => ({
      ...(await lister(items)(request)),
      $unknown: [{ no: 99 }],
    });
    assert.deepEqual(await collect(listAll(method, { pageSize: 2 })), items);
  });

  it("a server that repeats a page token ends with an error instead of looping", async () => {
    const looping = async (): Promise<Response> => ({
      $typeName: "test.ListThingsResponse",
      things: ["a"],
      nextPageToken: "same",
    });
    const seen: string[] = [];
    await assert.rejects(
      (async () => {
        for await (const thing of listAll(looping, {})) seen.push(thing);
      })(),
      (err: unknown) => err instanceof WharfApiError && err.code === Code.Internal,
    );
    assert.deepEqual(seen, ["a", "a"], "stopped at the first repetition");
  });

  it("stops calling when the consumer stops", async () => {
    const calls: Request[] = [];
    for await (const thing of listAll(lister(items, calls), { pageSize: 2 })) {
      if (thing === "b") break;
    }
    assert.equal(calls.length, 1);
  });
});
