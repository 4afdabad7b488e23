import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseRange } from "../../../src/oci/blob-handlers.js";
import { parseTimestampParam } from "../../../src/oci/history-handler.js";
import { OciError, toOciError } from "../../../src/oci/oci-errors.js";
import { credentialOf } from "../../../src/oci/registry-auth.js";
import { mayUseRegistry } from "../../../src/oci/registry-gate.js";
import { parseScopes } from "../../../src/oci/token-endpoint.js";
import { parseDigest } from "../../../src/registry/digest.js";

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const ociCode = (fn: () => unknown) => {
  try {
    fn();
  } catch (thrown) {
    // As the registry answers it: registry parsers (digests) throw registry errors that toOciError maps.
    const err = toOciError(thrown);
    assert.ok(err instanceof OciError, String(thrown));
    return err.code;
  }
  assert.fail("expected an OciError");
};

describe("registry request parsing", () => {
  it("parses digests of sha256 and sha512 and refuses the rest as DIGEST_INVALID", () => {
    const hex = "a".repeat(64);
    assert.deepEqual(parseDigest(`sha256:${hex}`), { algorithm: "sha256", hex, value: `sha256:${hex}` });
    assert.equal(parseDigest(`sha512:${"b".repeat(128)}`).algorithm, "sha512");
    for (const bad of [
      `sha256:${"A".repeat(64)}`,
      `sha256:${hex}0`,
      "md5:abc",
      "sha256",
      `sha256:${"g".repeat(64)}`,
    ]) {
      assert.equal(
        ociCode(() => parseDigest(bad)),
        "DIGEST_INVALID",
        bad,
      );
    }
  });

  it("parses byte ranges, clamping ends and refusing starts past the end", () => {
    assert.equal(parseRange(undefined, 10), undefined);
    assert.equal(parseRange("items=1-2", 10), undefined);
    assert.deepEqual(parseRange("bytes=2-4", 10), { start: 2, end: 5 });
    assert.deepEqual(parseRange("bytes=2-", 10), { start: 2, end: 10 });
    assert.deepEqual(parseRange("bytes=5-100", 10), { start: 5, end: 10 });
    assert.deepEqual(parseRange("bytes=-3", 10), { start: 7, end: 10 });
    assert.deepEqual(parseRange("bytes=-30", 10), { start: 0, end: 10 });
    assert.equal(parseRange("bytes=10-", 10), "unsatisfiable");
    assert.equal(parseRange("bytes=4-2", 10), "unsatisfiable");
    assert.equal(parseRange("bytes=-0", 10), "unsatisfiable");
  });

  it("parses token scopes, merging repeats and expanding *", () => {
    assert.deepEqual(
      parseScopes([
        "repository:acme/app:pull",
        "repository:acme/app:push repository:acme/other:*",
        "registry:catalog:*",
      ]),
      [
        { name: "acme/app", actions: ["pull", "push"] },
        { name: "acme/other", actions: ["pull", "push", "delete"] },
      ],
    );
    assert.deepEqual(parseScopes(["repository:Bad/Name:pull", "repository:acme/app:fly", "nonsense"]), [
      { name: "acme/app", actions: [] },
    ]);
  });

  it("reads Bearer and Basic _token credentials; refuses other users and schemes", () => {
    assert.equal(credentialOf(undefined), undefined);
    assert.deepEqual(credentialOf("Bearer abc"), { token: "abc" });
    assert.deepEqual(credentialOf(basic("_token", "jwt.value:with:colons")), {
      token: "jwt.value:with:colons",
    });
    assert.equal(credentialOf(basic("", "")), undefined, "skopeo's anonymous Basic");
    assert.match((credentialOf(basic("bob", "pw")) as { refused: string }).refused, /unknown username/);
    assert.match(
      (credentialOf("Digest x") as { refused: string }).refused,
      /unsupported authorization scheme/,
    );
    assert.match((credentialOf("Basic bm9jb2xvbg==") as { refused: string }).refused, /malformed/);
  });

  it("says a bare Bearer is missing its token, not that the scheme is unknown", () => {
    for (const header of ["Bearer", "bearer", "Bearer   "]) {
      assert.deepEqual(credentialOf(header), {
        refused: "missing bearer token (Authorization: Bearer <token>)",
      });
    }
    assert.match((credentialOf("Digest") as { refused: string }).refused, /scheme "digest"/);
  });

  it("parses RFC 3339 history bounds and names the bad parameter", () => {
    assert.equal(parseTimestampParam("start", null), undefined);
    assert.equal(parseTimestampParam("start", "2024-01-01T00:00:00Z"), Date.UTC(2024, 0, 1));
    assert.equal(
      parseTimestampParam("end", "2024-01-01T01:00:00.5+01:00"),
      Date.UTC(2024, 0, 1, 0, 0, 0, 500),
    );
    for (const bad of ["yesterday", "2024-01-01", "2024-13-01T00:00:00Z", "1700000000"]) {
      try {
        parseTimestampParam("start", bad);
        assert.fail(`accepted ${bad}`);
      } catch (err) {
        assert.ok(err instanceof OciError, String(err));
        assert.equal(err.code, "INVALID_ARGUMENT");
        assert.match(err.message, /^start must be an RFC 3339 timestamp/);
      }
    }
  });

  it("lets only root-level and organization-level identities use the registry", () => {
    const root = "a".repeat(40);
    assert.equal(mayUseRegistry(root), true);
    assert.equal(mayUseRegistry(`${root}/${"b".repeat(16)}`), true);
    assert.equal(mayUseRegistry(`${root}/${"b".repeat(16)}/${"c".repeat(16)}`), false);
  });
});
