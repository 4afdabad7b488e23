import assert from "node:assert/strict";
import { availableParallelism } from "node:os";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../../src/config/config.js";

const refuses = (input: Parameters<typeof loadConfig>[0], pattern: RegExp, label: string) =>
  assert.throws(
    () => loadConfig(input, {}),
    (err: unknown) => err instanceof ConfigError && pattern.test(err.message),
    label,
  );

describe("--shutdown-delay / --shutdown-timeout", () => {
  it("default to 5 s and 30 s; the flag wins over the environment; 0 and ms are accepted", () => {
    assert.deepEqual(loadConfig({}, {}).shutdown, { delayMs: 5000, timeoutMs: 30_000 });
    const env = { WHARF_SHUTDOWN_DELAY: "10s", WHARF_SHUTDOWN_TIMEOUT: "2m" };
    assert.deepEqual(loadConfig({}, env).shutdown, { delayMs: 10_000, timeoutMs: 120_000 });
    assert.deepEqual(loadConfig({ shutdownDelay: "0", shutdownTimeout: "1500ms" }, env).shutdown, {
      delayMs: 0,
      timeoutMs: 1500,
    });
  });

  it("refuse anything but a non-negative duration", () => {
    for (const bad of ["-1s", "x", "1.5s", "5 minutes", "2d"])
      refuses({ shutdownDelay: bad }, /--shutdown-delay must be a duration like 5s, 500ms or 0/, bad);
    refuses({ shutdownTimeout: "soon" }, /--shutdown-timeout must be a duration/, "soon");
  });
});

describe("--workers", () => {
  it("defaults to 1; auto is the available parallelism", () => {
    assert.equal(loadConfig({}, {}).workers, 1);
    assert.equal(loadConfig({ workers: "auto" }, {}).workers, availableParallelism());
    assert.equal(loadConfig({}, { WHARF_WORKERS: "3" }).workers, 3);
  });

  it("refuses anything but auto or 1 to 256", () => {
    for (const bad of ["0", "257", "-1", "two", "1.5"])
      refuses({ workers: bad }, /--workers must be auto or a whole number from 1 to 256/, bad);
  });
});
