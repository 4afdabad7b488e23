import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig, publicUrlOf } from "../../../src/config/config.js";

describe("TLS and --trust-proxy configuration", () => {
  it("is off by default: no pair, no trusted proxy, http:// URLs", () => {
    const config = loadConfig({}, {});
    assert.deepEqual(config.tls, { api: undefined, registry: undefined });
    assert.deepEqual(config.trustProxy, []);
    assert.equal(publicUrlOf("", { host: "127.0.0.1", port: 8080 }), "http://127.0.0.1:8080");
    assert.equal(publicUrlOf("", { host: "::1", port: 8080 }, true), "https://[::1]:8080");
    assert.equal(
      publicUrlOf("https://wharf.example", { host: "::1", port: 8080 }, false),
      "https://wharf.example",
    );
  });

  it("reads --trust-proxy from WHARF_TRUST_PROXY, normalised", () => {
    assert.deepEqual(loadConfig({}, { WHARF_TRUST_PROXY: " 10.1.0.0/16 ,fd00::1" }).trustProxy, [
      "10.1.0.0/16",
      "fd00::1/128",
    ]);
  });

  it("refuses half a pair from flags or variables, naming the flags", () => {
    assert.throws(
      () => loadConfig({ tlsKey: "k.pem" }, {}),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.message, "--tls-cert and --tls-key go together (got only --tls-key)");
        return true;
      },
    );
    assert.throws(
      () => loadConfig({}, { WHARF_REGISTRY_TLS_CERT: "c.pem" }),
      /--registry-tls-cert and --registry-tls-key go together \(got only --registry-tls-cert\)$/,
    );
  });
});
