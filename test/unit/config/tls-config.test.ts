import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { ConfigError, loadConfig, publicUrlOf } from "../../../src/config/config.js";
import { makeThrowawayCa, opensslSkip } from "../../support/throwaway-ca.js";

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

  it("gives each listener its pair: the registry's own when given, else the shared one", {
    skip: opensslSkip,
  }, async () => {
    const dir = await mkdtemp(join(tmpdir(), "wharf-tls-config-"));
    try {
      const ca = await makeThrowawayCa(dir);
      const shared = await ca.issue("shared");
      const registry = await ca.issue("registry");
      const both = loadConfig({ tlsCert: shared.certFile, tlsKey: shared.keyFile }, {});
      assert.equal(both.tls.api?.certFile, shared.certFile);
      assert.equal(both.tls.registry?.certFile, shared.certFile);
      const own = loadConfig(
        { tlsCert: shared.certFile, tlsKey: shared.keyFile },
        { WHARF_REGISTRY_TLS_CERT: registry.certFile, WHARF_REGISTRY_TLS_KEY: registry.keyFile },
      );
      assert.equal(own.tls.api?.certFile, shared.certFile);
      assert.equal(own.tls.registry?.certFile, registry.certFile);
      assert.equal(own.tls.registry?.certFlag, "--registry-tls-cert");
      const registryOnly = loadConfig(
        { registryTlsCert: registry.certFile, registryTlsKey: registry.keyFile },
        {},
      );
      assert.equal(registryOnly.tls.api, undefined, "the API stays cleartext");
      assert.equal(registryOnly.tls.registry?.keyFile, registry.keyFile);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
