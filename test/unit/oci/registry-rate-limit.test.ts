import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { budgetOf } from "../../../src/oci/registry-rate-limit.js";
import { matchRoute } from "../../../src/oci/routes.js";

const D = `sha256:${"a".repeat(64)}`;

describe("budgetOf", () => {
  it("charges reads and /token to pull, uploads and other writes to push", () => {
    const cases: Array<[string, string, "pull" | "push"]> = [
      ["GET", "/v2/", "pull"],
      ["GET", "/token", "pull"],
      ["POST", "/token", "pull"],
      ["GET", "/v2/acme/app/manifests/latest", "pull"],
      ["HEAD", "/v2/acme/app/manifests/latest", "pull"],
      ["GET", `/v2/acme/app/blobs/${D}`, "pull"],
      ["HEAD", `/v2/acme/app/blobs/${D}`, "pull"],
      ["GET", "/v2/acme/app/tags/list", "pull"],
      ["GET", `/v2/acme/app/referrers/${D}`, "pull"],
      ["GET", "/v2/acme/app/_service/history/latest", "pull"],
      ["POST", "/v2/acme/app/blobs/uploads/", "push"],
      ["PATCH", "/v2/acme/app/blobs/uploads/some-id", "push"],
      ["PUT", "/v2/acme/app/blobs/uploads/some-id", "push"],
      ["GET", "/v2/acme/app/blobs/uploads/some-id", "push"],
      ["DELETE", "/v2/acme/app/blobs/uploads/some-id", "push"],
      ["PUT", "/v2/acme/app/manifests/latest", "push"],
      ["DELETE", `/v2/acme/app/manifests/${D}`, "push"],
      ["DELETE", `/v2/acme/app/blobs/${D}`, "push"],
    ];
    for (const [method, path, budget] of cases) {
      const route = matchRoute(path);
      assert.ok(route, path);
      assert.equal(budgetOf(route, method), budget, `${method} ${path}`);
    }
  });
});
