import { extname } from "node:path";

/**
 * The URL of the module at `path` (relative to `base`, written without an extension) with `base`'s
 * own extension: `.js` when the code runs compiled from `dist/`, `.ts` when it runs from `src/` under
 * tsx (tests), which does not map a `.js` entry point to its `.ts` source. For starting a
 * worker thread: `new Worker(moduleUrl("../workers/x", import.meta.url))`. Under tsx the thread
 * inherits the parent's `--import` preloads, and `scripts/tsx-in-workers.mjs` registers tsx there.
 */
export function moduleUrl(path: string, base: string): URL {
  return new URL(`${path}${extname(new URL(base).pathname)}`, base);
}
