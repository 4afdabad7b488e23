import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Command } from "commander";
import { addConfigOptions, configInputOf, SERVE_FIELDS } from "../../../src/cli/server/config-options.js";
import { ConfigError, loadConfig } from "../../../src/config/config.js";

const refuses = (input: Parameters<typeof loadConfig>[0], pattern: RegExp, label: string) =>
  assert.throws(
    () => loadConfig(input, {}),
    (err: unknown) => err instanceof ConfigError && pattern.test(err.message),
    label,
  );

describe("--rate-limit-api / --rate-limit-registry", () => {
  it("are off by default", () => {
    assert.equal(loadConfig({}, {}).rateLimits, undefined);
  });

  it("read the flags, else WHARF_RATE_LIMIT_API and WHARF_RATE_LIMIT_REGISTRY", () => {
    const env = { WHARF_RATE_LIMIT_API: "5/s", WHARF_RATE_LIMIT_REGISTRY: "push=1/s,burst=2" };
    const fromEnv = loadConfig({}, env).rateLimits;
    assert.deepEqual(fromEnv?.api, { perSecond: 5, burst: 5, text: "5/s,burst=5" });
    assert.deepEqual(fromEnv?.registry, { push: { perSecond: 1, burst: 2, text: "1/s,burst=2" } });
    const flags = loadConfig({ rateLimitApi: "50/s,burst=100" }, env).rateLimits;
    assert.equal(flags?.api?.burst, 100, "the flag wins");
    assert.equal(flags?.registry?.push?.burst, 2);
    assert.equal(loadConfig({ rateLimitRegistry: "pull=1/s" }, {}).rateLimits?.api, undefined);
  });

  it("refuse a bad limit, naming the flag and what is wrong", () => {
    refuses(
      { rateLimitApi: "fast" },
      /^--rate-limit-api: "fast" is not a rate: write <requests>\/<s\|m\|h>/,
      "fast",
    );
    refuses(
      { rateLimitApi: "5/s,burst=0" },
      /^--rate-limit-api: burst must be a whole number from 1/,
      "burst",
    );
    refuses(
      { rateLimitRegistry: "pull=5/s;pull=1/s" },
      /^--rate-limit-registry: the pull budget is given twice/,
      "twice",
    );
    refuses({ rateLimitRegistry: "get=5/s" }, /^--rate-limit-registry: "get" is not a budget/, "get");
  });

  it("are flags of wharf serve, read back into the configuration input", () => {
    assert.ok(SERVE_FIELDS.includes("rateLimitApi") && SERVE_FIELDS.includes("rateLimitRegistry"));
    const serve = addConfigOptions(new Command("serve").exitOverride(), SERVE_FIELDS);
    serve.parse(["--rate-limit-api", "50/s,burst=100", "--rate-limit-registry", "pull=1/s;push=1/m"], {
      from: "user",
    });
    const input = configInputOf(serve.opts(), SERVE_FIELDS);
    assert.equal(input.rateLimitApi, "50/s,burst=100");
    assert.equal(loadConfig(input, {}).rateLimits?.registry?.push?.perSecond, 1 / 60);
    const help = serve.helpInformation();
    assert.match(help, /--rate-limit-api <limit>.*\[WHARF_RATE_LIMIT_API\]/s);
    // gc, admin and the importers serve nothing: they do not take the flags.
    const gc = addConfigOptions(new Command("gc"));
    assert.doesNotMatch(gc.helpInformation(), /rate-limit/);
  });
});
