// Writes docs/cli.md from the CLI's own help (the build in dist/; run `npm run build` first, or
// `node scripts/build-if-stale.mjs`). test/unit/cli/client/cli-docs.test.ts fails when it is stale.
import { writeFile } from "node:fs/promises";
import { cliReference } from "../dist/cli/cli-reference.js";

const file = new URL("../docs/cli.md", import.meta.url);
await writeFile(file, await cliReference());
console.log(`wrote ${file.pathname}`);
