// Preload (`--import`) for running src/ through tsx with worker threads: scripts/run-tests.mjs
// passes it after `--import tsx`. A worker thread inherits the `--import` flags, but on Node 20 tsx
// registers its loader in the main thread only, so a worker started on a `.ts` module fails with
// ERR_UNKNOWN_FILE_EXTENSION. This registers it in each worker thread (where tsx did so
// already, newer Node, a second registration is harmless). The build in dist/ needs none of this.
import { isMainThread } from "node:worker_threads";

if (!isMainThread) (await import("tsx/esm/api")).register();
