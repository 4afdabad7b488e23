import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import { cliReference } from "../../../../src/cli/cli-reference.js";
import { CONFIG_FLAGS, envOf } from "../../../../src/cli/server/config-options.js";
import { CONFIG_ENV } from "../../../../src/config/config.js";

describe("docs/cli.md", () => {
  it("is the CLI's own help, regenerated (node scripts/generate-cli-docs.mjs after a build)", async () => {
    const committed = await readFile(new URL("../../../../docs/cli.md", import.meta.url), "utf8");
    assert.ok(
      committed === (await cliReference()),
      "docs/cli.md is stale: run `node scripts/build-if-stale.mjs && node scripts/generate-cli-docs.mjs`",
    );
  });

  it("covers every command, server-side and client, from the one parser", async () => {
    const text = await cliReference();
    for (const heading of [
      "## wharf\n",
      "## wharf serve\n",
      "## wharf gc\n",
      "## wharf admin keys rotate",
      "## wharf import libraries",
      "## wharf auth login",
      "## wharf auth pull-token create",
      "## wharf images history",
      "## wharf iam roles capabilities",
      "## wharf auth configure-docker",
      "## wharf events deliveries wait",
    ]) {
      assert.ok(text.includes(heading), heading);
    }
    assert.match(text, /Usage: wharf serve \[options\]/);
    assert.match(text, /--data-dir <dir> +data folder \(default \.\/wharf-data\) \[WHARF_DATA_DIR\]/);
  });

  it("names each configuration flag's environment variable as the server reads it", () => {
    for (const flag of CONFIG_FLAGS) assert.equal(envOf(flag.field), CONFIG_ENV[flag.field], flag.flags);
    assert.equal(CONFIG_FLAGS.length, Object.keys(CONFIG_ENV).length, "every configuration input has a flag");
  });
});
