import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { describe, it } from "node:test";
import { cliReference } from "../../../../src/cli/client/reference.js";
import { USAGE } from "../../../../src/cli/main.js";

describe("docs/cli.md", () => {
  it("is the CLI's own help, regenerated (node scripts/generate-cli-docs.mjs after a build)", async () => {
    const committed = await readFile(new URL("../../../../docs/cli.md", import.meta.url), "utf8");
    assert.ok(
      committed === (await cliReference(USAGE)),
      "docs/cli.md is stale: run `node scripts/build-if-stale.mjs && node scripts/generate-cli-docs.mjs`",
    );
  });

  it("covers every client command and the server-side ones", async () => {
    const text = await cliReference(USAGE);
    for (const heading of [
      "## wharf images history",
      "## wharf iam roles capabilities",
      "## wharf auth configure-docker",
    ]) {
      assert.ok(text.includes(heading), heading);
    }
    assert.match(text, /wharf serve \[options\]/);
  });
});
