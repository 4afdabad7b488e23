import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { parseChallenges } from "../../../../src/registry/remote/www-authenticate.js";

describe("WWW-Authenticate challenges", () => {
  it("reads distribution's Bearer challenge with quoted parameters", () => {
    assert.deepEqual(
      parseChallenges([
        'Bearer realm="https://auth.example/token",service="registry.example",scope="repository:team/app:pull,push"',
      ]),
      [
        {
          scheme: "bearer",
          params: {
            realm: "https://auth.example/token",
            service: "registry.example",
            scope: "repository:team/app:pull,push",
          },
        },
      ],
    );
  });

  it("reads a Basic challenge, unquoted values, and several challenges in one value or in several", () => {
    assert.deepEqual(parseChallenges(['Basic realm="wharf"']), [
      { scheme: "basic", params: { realm: "wharf" } },
    ]);
    assert.deepEqual(parseChallenges(["Basic realm=wharf, charset=UTF-8"]), [
      { scheme: "basic", params: { realm: "wharf", charset: "UTF-8" } },
    ]);
    assert.deepEqual(
      parseChallenges(['Bearer realm="https://a/t", service="s", Basic realm="x"', "Negotiate"]).map(
        (c) => c.scheme,
      ),
      ["bearer", "basic", "negotiate"],
    );
  });

  it("keeps commas and escaped quotes inside quoted strings; parameter names are case-insensitive", () => {
    assert.deepEqual(parseChallenges(['BEARER Realm="https://a/t?x=1,2",Scope="a \\"b\\" c"']), [
      { scheme: "bearer", params: { realm: "https://a/t?x=1,2", scope: 'a "b" c' } },
    ]);
  });

  it("stops at what it cannot read, keeping what came before", () => {
    assert.deepEqual(parseChallenges(['Bearer realm="unterminated']), [{ scheme: "bearer", params: {} }]);
    assert.deepEqual(parseChallenges(["=oops"]), []);
    assert.deepEqual(parseChallenges([""]), []);
  });

  it("never throws, whatever the header", () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 200 }), { maxLength: 3 }), (values) => {
        const parsed = parseChallenges(values);
        assert.ok(Array.isArray(parsed));
      }),
      { numRuns: 200 },
    );
  });
});
