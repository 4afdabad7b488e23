import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { nextLink } from "../../../../src/registry/remote/link-header.js";

const BASE = new URL("https://r.example/v2/app/tags/list?n=2");

describe("Link rel=next", () => {
  it("resolves distribution's relative next link", () => {
    assert.equal(
      nextLink('</v2/app/tags/list?last=b&n=2>; rel="next"', BASE)?.href,
      "https://r.example/v2/app/tags/list?last=b&n=2",
    );
  });

  it("finds next among other relations, unquoted too", () => {
    assert.equal(
      nextLink('<https://r.example/p1>; rel="prev", <https://r.example/p3>; rel=next', BASE)?.href,
      "https://r.example/p3",
    );
    assert.equal(
      nextLink(['<https://r.example/x>; rel="first"', '</y>; rel="next"'], BASE)?.href,
      "https://r.example/y",
    );
  });

  it("is undefined without a next link", () => {
    assert.equal(nextLink(undefined, BASE), undefined);
    assert.equal(nextLink('</p1>; rel="prev"', BASE), undefined);
    assert.equal(nextLink("garbage", BASE), undefined);
    assert.equal(nextLink('</p>; rel="nextish"', BASE), undefined);
  });
});
