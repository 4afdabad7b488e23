import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { DomainError, notFound, permissionDenied } from "../../../src/core/errors.js";
import { allV2Pages, foundOrNothing, itemsOf, MAX_V1_LIST_ITEMS } from "../../../src/core/v1-face.js";

describe("v1 face conventions", () => {
  it("gathers every v2 page, following nextPageToken until it is empty", async () => {
    const pages: Record<string, { items: number[]; nextPageToken: string }> = {
      "": { items: [1, 2], nextPageToken: "b" },
      b: { items: [3], nextPageToken: "c" },
      c: { items: [], nextPageToken: "" },
    };
    const asked: string[] = [];
    const items = await allV2Pages("/x/v2/things", async (token) => {
      asked.push(token);
      const page = pages[token];
      assert.ok(page, `unexpected token ${token}`);
      return page;
    });
    assert.deepEqual(items, [1, 2, 3]);
    assert.deepEqual(asked, ["", "b", "c"]);
  });

  it("refuses to answer more than MAX_V1_LIST_ITEMS, naming the paged v2 list", async () => {
    const big = Array.from({ length: 4_000 }, (_, i) => i);
    await assert.rejects(
      allV2Pages("/registry/v2/repos", async () => ({ items: big, nextPageToken: "more" })),
      (err: unknown) =>
        err instanceof DomainError &&
        err.code === Code.FailedPrecondition &&
        err.message.includes(String(MAX_V1_LIST_ITEMS)) &&
        err.message.includes("/registry/v2/repos"),
    );
  });

  it("turns NOT_FOUND into nothing and keeps every other error", async () => {
    assert.equal(
      await foundOrNothing(async () => {
        throw notFound("group", "abc");
      }),
      undefined,
    );
    assert.equal(await foundOrNothing(async () => 7), 7);
    await assert.rejects(
      foundOrNothing(async () => {
        throw permissionDenied("no");
      }),
      (err: unknown) => err instanceof DomainError && err.code === Code.PermissionDenied,
    );
    assert.deepEqual(itemsOf(undefined), []);
    assert.deepEqual(itemsOf(0), [0]);
  });
});
