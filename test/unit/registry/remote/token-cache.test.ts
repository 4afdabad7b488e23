import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createTokenCache } from "../../../../src/registry/remote/token-cache.js";

describe("the token cache", () => {
  it("keeps a token per scope until shortly before expires_in", () => {
    let now = 1_000_000;
    const cache = createTokenCache({ now: () => now });
    cache.set("repository:a:pull", "ta", 300);
    cache.set("repository:b:pull", "tb", 300);
    assert.equal(cache.get("repository:a:pull"), "ta");
    assert.equal(cache.get("repository:b:pull"), "tb");
    assert.equal(cache.get("repository:c:pull"), undefined);
    now += 294_000;
    assert.equal(cache.get("repository:a:pull"), "ta");
    now += 1_000;
    assert.equal(cache.get("repository:a:pull"), undefined, "not used in its last 5 s");
  });

  it("assumes 60 s when expires_in is absent or not a positive number", () => {
    for (const expires of [undefined, "300", -1, 0, Number.NaN]) {
      let now = 0;
      const cache = createTokenCache({ now: () => now });
      cache.set("s", "t", expires);
      now = 54_000;
      assert.equal(cache.get("s"), "t", String(expires));
      now = 55_000;
      assert.equal(cache.get("s"), undefined, String(expires));
    }
  });

  it("forgets a token on delete", () => {
    const cache = createTokenCache({ now: () => 0 });
    cache.set("s", "t", 60);
    cache.delete("s");
    assert.equal(cache.get("s"), undefined);
  });
});
