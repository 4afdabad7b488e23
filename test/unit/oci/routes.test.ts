import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { matchRoute, REPOSITORY_NAME } from "../../../src/oci/routes.js";

describe("matchRoute", () => {
  it("recognises every endpoint", () => {
    assert.deepEqual(matchRoute("/v2/"), { kind: "base" });
    assert.deepEqual(matchRoute("/token"), { kind: "token" });
    assert.deepEqual(matchRoute("/v2/acme/app/blobs/sha256:ab"), {
      kind: "blob",
      name: "acme/app",
      digest: "sha256:ab",
    });
    assert.deepEqual(matchRoute("/v2/acme/app/blobs/uploads/"), { kind: "uploads", name: "acme/app" });
    assert.deepEqual(matchRoute("/v2/acme/app/blobs/uploads"), { kind: "uploads", name: "acme/app" });
    assert.deepEqual(matchRoute("/v2/acme/app/blobs/uploads/u1"), {
      kind: "upload",
      name: "acme/app",
      id: "u1",
    });
    assert.deepEqual(matchRoute("/v2/a/b/c/manifests/latest"), {
      kind: "manifest",
      name: "a/b/c",
      reference: "latest",
    });
    assert.deepEqual(matchRoute("/v2/acme/app/tags/list"), { kind: "tags", name: "acme/app" });
    assert.deepEqual(matchRoute("/v2/acme/app/referrers/sha256:cd"), {
      kind: "referrers",
      name: "acme/app",
      digest: "sha256:cd",
    });
    assert.deepEqual(matchRoute("/v2/acme/app/_service/history/latest"), {
      kind: "history",
      name: "acme/app",
      tag: "latest",
    });
  });

  it("splits names whose components are endpoint words", () => {
    assert.deepEqual(matchRoute("/v2/acme/blobs/manifests/v1"), {
      kind: "manifest",
      name: "acme/blobs",
      reference: "v1",
    });
    assert.deepEqual(matchRoute("/v2/acme/manifests/tags/list"), { kind: "tags", name: "acme/manifests" });
  });

  it("rejects unknown shapes", () => {
    for (const path of [
      "/",
      "/v2/acme",
      "/v2/acme/app/manifests/",
      "/v2/acme/app/unknown/x",
      "/v3/a/manifests/x",
    ]) {
      assert.equal(matchRoute(path), undefined, path);
    }
  });
});

describe("REPOSITORY_NAME", () => {
  it("accepts spec names and refuses others", () => {
    for (const ok of ["a", "acme/app", "a.b/c_d/e__f/g-h/i--j", "0/9"]) assert.match(ok, REPOSITORY_NAME);
    for (const bad of ["", "A/b", "a//b", "a/", "/a", "a_/b", "a/.b", "a b", "a/b-"]) {
      assert.doesNotMatch(bad, REPOSITORY_NAME, bad);
    }
  });
});
