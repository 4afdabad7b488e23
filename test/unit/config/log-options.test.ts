import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../../src/config/config.js";

describe("--log-level / --log-format", () => {
  it("default to info and json; the flag wins over the environment; case does not matter", () => {
    assert.deepEqual(loadConfig({}, {}).log, { level: "info", format: "json" });
    const env = { WHARF_LOG_LEVEL: "warn", WHARF_LOG_FORMAT: "pretty" };
    assert.deepEqual(loadConfig({}, env).log, { level: "warn", format: "pretty" });
    assert.deepEqual(loadConfig({ logLevel: "DEBUG", logFormat: "JSON" }, env).log, {
      level: "debug",
      format: "json",
    });
    assert.equal(loadConfig({ logLevel: "silent" }, {}).log.level, "silent");
  });

  it("refuse anything else, naming the choices", () => {
    for (const [input, pattern] of [
      [
        { logLevel: "verbose" },
        /--log-level must be one of trace, debug, info, warn, error, fatal, silent \(got "verbose"\)/,
      ],
      [{ logLevel: "10" }, /--log-level must be one of/],
      [{ logFormat: "text" }, /--log-format must be one of json, pretty \(got "text"\)/],
    ] as const)
      assert.throws(
        () => loadConfig(input, {}),
        (err: unknown) => err instanceof ConfigError && pattern.test(err.message),
        JSON.stringify(input),
      );
  });
});
