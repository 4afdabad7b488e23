#!/usr/bin/env -S node --initial-old-space-size=128
// The `wharf` command: runs the build in dist/, which `npm ci` compiles (the `prepare` script) and
// `npm run build` refreshes after src/ changes.
// The initial old space keeps V8 from running back-to-back full collections when a large blob
// transfer starts after the server idled and shrank its heap (measured: 2-3x the CPU per GiB).
import { main } from "../dist/cli/main.js";

process.exitCode = await main(process.argv.slice(2));
