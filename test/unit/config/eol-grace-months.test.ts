import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "../../../src/config/config.js";

describe("--eol-grace-months / WHARF_EOL_GRACE_MONTHS", () => {
  it("defaults to 6 months; the flag wins over the environment", () => {
    assert.equal(loadConfig({}, {}).eolGraceMonths, 6);
    assert.equal(loadConfig({}, { WHARF_EOL_GRACE_MONTHS: "12" }).eolGraceMonths, 12);
    assert.equal(loadConfig({ eolGraceMonths: "0" }, { WHARF_EOL_GRACE_MONTHS: "12" }).eolGraceMonths, 0);
  });

  it("refuses anything but a whole number of months from 0 to 120", () => {
    for (const bad of ["-1", "121", "1.5", "6m", "x"]) {
      assert.throws(
        () => loadConfig({ eolGraceMonths: bad }, {}),
        (err: unknown) =>
          err instanceof ConfigError &&
          /--eol-grace-months must be a whole number of months from 0 to 120/.test(err.message),
        bad,
      );
    }
  });
});
