import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Code } from "@connectrpc/connect";
import { WharfApiError } from "../../../src/sdk/errors.js";
import { createRegistryHelpers, parseReference } from "../../../src/sdk/registry.js";

const REGISTRY = "http://127.0.0.1:5000";
const DIGEST = `sha256:${"a".repeat(64)}`;

describe("parseReference", () => {
  it("splits names, tags and digests, defaulting to latest and dropping the registry's host", () => {
    assert.deepEqual(parseReference("acme/app:1.2", REGISTRY), { name: "acme/app", ref: "1.2" });
    assert.deepEqual(parseReference("acme/team/app", REGISTRY), { name: "acme/team/app", ref: "latest" });
    assert.deepEqual(parseReference(`acme/app@${DIGEST}`, REGISTRY), { name: "acme/app", ref: DIGEST });
    assert.deepEqual(parseReference("127.0.0.1:5000/acme/app:v1", REGISTRY), { name: "acme/app", ref: "v1" });
    assert.deepEqual(parseReference("other.example.com/acme/app", REGISTRY), {
      name: "other.example.com/acme/app",
      ref: "latest",
    });
  });
});

describe("the registry helpers without a registry", () => {
  it("a registry that does not answer is UNAVAILABLE, as a WharfApiError", async () => {
    const down: typeof fetch = async () => {
      throw new TypeError("fetch failed");
    };
    const helpers = createRegistryHelpers({
      apiUrl: "http://127.0.0.1:8080",
      registryUrl: async () => REGISTRY,
      tokenSource: undefined,
      fetch: down,
    });
    await assert.rejects(
      helpers.resolve("acme/app:v1"),
      (err: unknown) => err instanceof WharfApiError && err.code === Code.Unavailable,
    );
  });
});
