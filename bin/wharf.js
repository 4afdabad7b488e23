#!/usr/bin/env -S node --initial-old-space-size=128
// The `wharf` command: loads TypeScript sources through tsx, so no build step is needed.
// The initial old space keeps V8 from running back-to-back full collections when a large blob
// transfer starts after the server idled and shrank its heap (measured: 2-3x the CPU per GiB).
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
